//! The shape of a schema, checked before it is compiled: how deep its JSON nests, and
//! whether its evaluation can end.
//!
//! Keywords that apply a subschema to the same instance location ("in place": `$ref`,
//! `$dynamicRef`, `$recursiveRef`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
//! `dependentSchemas`) form a graph. A cycle in that graph means the evaluation never
//! ends, whatever the input: `{"$ref": "#"}` beside `unevaluatedProperties`, or `a` refers
//! to `b` which refers to `a`. Keywords that descend into the input (`properties`, `items`,
//! ...) end with the input, whose depth is bounded, so recursion through them (a tree) is
//! fine. `$dynamicRef` and `$recursiveRef` are followed to their static target.

use std::collections::HashMap;

use referencing::{Draft, Registry, Resolver};
use serde_json::Value;

/// The deepest JSON nesting of a schema, and of an instance, that toolwire reads.
pub(crate) const MAX_DEPTH: usize = 100;
/// The longest chain of schemas applied in place to one instance location.
pub(crate) const MAX_IN_PLACE_CHAIN: usize = 64;
/// The most schema evaluations one instance location can need.
pub(crate) const MAX_IN_PLACE_EVALUATIONS: u64 = 10_000;
/// The most ways one schema can be reached from the root (over every keyword, in place or
/// descending): a validator that does not memoize evaluates it once per way.
pub(crate) const MAX_EVALUATION_PATHS: u64 = 10_000;

const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_MANY: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const DESCEND_ONE: [&str; 8] = [
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "contentSchema",
];
const REFS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// How deep `value` nests (a scalar is 0, `[]` is 1), counting no further than `limit + 1`.
/// Iterative: safe on any depth.
pub(crate) fn depth_exceeds(value: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth + 1 > limit {
            return true;
        }
        for child in children {
            if child.is_array() || child.is_object() {
                stack.push((child, depth + 1));
            }
        }
    }
    false
}

/// Whether `value` (or anything inside it) has a `$ref`-like keyword.
fn has_refs(value: &Value) -> bool {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => {
                if REFS
                    .iter()
                    .any(|k| map.get(*k).is_some_and(Value::is_string))
                {
                    return true;
                }
                stack.extend(map.values());
            }
            _ => {}
        }
    }
    false
}

struct Node<'r> {
    /// `(target node, in place, the reference that led there)`
    edges: Vec<(usize, bool, Option<&'r str>)>,
    /// The edges that descend into the input, with the child values each applies to.
    descents: Vec<(usize, Group)>,
}

/// Which children of a value a descending keyword applies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Group {
    /// `properties/<key>`
    Key(String),
    /// `additionalProperties`, `patternProperties`, `unevaluatedProperties`
    AnyKey,
    /// `items`, `additionalItems`, `unevaluatedItems`, `contains`
    Item,
    /// `prefixItems/<i>` (draft-07: `items/<i>`)
    Index(usize),
    /// `propertyNames`, `contentSchema`: strings, which have no children
    Leaf,
}

struct Graph<'r> {
    nodes: Vec<Node<'r>>,
    index: HashMap<*const Value, usize>,
    queue: Vec<(usize, &'r Value, Resolver<'r>, Draft)>,
}

impl<'r> Graph<'r> {
    fn node(&mut self, value: &'r Value, resolver: Resolver<'r>, draft: Draft) -> usize {
        let key = std::ptr::from_ref(value);
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            edges: Vec::new(),
            descents: Vec::new(),
        });
        self.index.insert(key, id);
        self.queue.push((id, value, resolver, draft));
        id
    }

    /// Adds the edges of one schema object.
    fn expand(&mut self, id: usize, value: &'r Value, parent: &Resolver<'r>, draft: Draft) {
        let Value::Object(map) = value else { return };
        let draft = draft.detect(value);
        let resolver = parent
            .in_subresource(draft.create_resource_ref(value))
            .unwrap_or_else(|_| parent.clone());
        let mut edges = Vec::new();
        let mut descents = Vec::new();
        for keyword in REFS {
            let Some(Value::String(reference)) = map.get(keyword) else {
                continue;
            };
            if let Ok(resolved) = resolver.lookup(reference) {
                let (contents, target_resolver, target_draft) = resolved.into_inner();
                let target = self.node(contents, target_resolver, target_draft);
                edges.push((target, true, Some(reference.as_str())));
            }
        }
        // before 2019-09, the siblings of `$ref` are ignored
        let siblings = !(matches!(draft, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
            && map.contains_key("$ref"));
        if siblings {
            let mut child = |value: &'r Value, in_place: bool, graph: &mut Self| {
                if value.is_object() {
                    let target = graph.node(value, resolver.clone(), draft);
                    edges.push((target, in_place, None));
                }
            };
            for keyword in IN_PLACE_ONE {
                if let Some(value) = map.get(keyword) {
                    child(value, true, self);
                }
            }
            for keyword in IN_PLACE_MANY {
                if let Some(Value::Array(items)) = map.get(keyword) {
                    items.iter().for_each(|value| child(value, true, self));
                }
            }
            for keyword in ["dependentSchemas", "dependencies"] {
                if let Some(Value::Object(values)) = map.get(keyword) {
                    values.values().for_each(|value| child(value, true, self));
                }
            }
            let mut descend = |value: &'r Value, group: Group, graph: &mut Self| {
                if value.is_object() {
                    let target = graph.node(value, resolver.clone(), draft);
                    edges.push((target, false, None));
                    descents.push((target, group));
                }
            };
            for keyword in DESCEND_ONE.iter().chain(["prefixItems"].iter()) {
                let group = match *keyword {
                    "additionalProperties" | "unevaluatedProperties" => Group::AnyKey,
                    "propertyNames" | "contentSchema" => Group::Leaf,
                    _ => Group::Item,
                };
                match map.get(*keyword) {
                    Some(Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .for_each(|(i, value)| descend(value, Group::Index(i), self)),
                    Some(value) => descend(value, group, self),
                    None => {}
                }
            }
            if let Some(Value::Object(values)) = map.get("properties") {
                for (key, value) in values {
                    descend(value, Group::Key(key.clone()), self);
                }
            }
            if let Some(Value::Object(values)) = map.get("patternProperties") {
                values
                    .values()
                    .for_each(|value| descend(value, Group::AnyKey, self));
            }
        }
        self.nodes[id].edges = edges;
        self.nodes[id].descents = descents;
    }
}

/// Checks that evaluating `schema` ends in bounded depth. `registry` holds `schema` (at
/// `base`) and every resource its references may name. `Err` says what is wrong.
pub(crate) fn check_evaluation(
    schema: &Value,
    draft: Draft,
    registry: &Registry<'_>,
    base: referencing::Uri<String>,
) -> Result<(), String> {
    if !has_refs(schema) {
        return Ok(()); // a tree: every chain ends with the schema's own (bounded) depth
    }
    let root_resolver = registry.resolver(base);
    let mut graph = Graph {
        nodes: Vec::new(),
        index: HashMap::new(),
        queue: Vec::new(),
    };
    // start from the registry's own copy, so references land on the same values
    let root = match root_resolver.lookup("#") {
        Ok(resolved) => resolved.into_inner(),
        Err(_) => (schema, root_resolver.clone(), draft),
    };
    graph.node(root.0, root.1, root.2);
    while let Some((id, value, resolver, draft)) = graph.queue.pop() {
        graph.expand(id, value, &resolver, draft);
    }
    check_in_place(&graph.nodes)?;
    check_growth(&graph.nodes)?;
    check_paths(&graph.nodes)
}

/// Counts the ways each schema is reached from the root (node 0), over the condensation of
/// the graph (recursion inside a component is bounded by the input's depth and by
/// [`check_growth`]). Two keywords that apply one subschema to the same child, repeated down
/// a chain of distinct subschemas (`prefixItems` and `contains`, `allOf` twice), double the
/// evaluations at each link without any recursion: more than [`MAX_EVALUATION_PATHS`] ways to
/// one schema is an error.
fn check_paths(nodes: &[Node<'_>]) -> Result<(), String> {
    if nodes.is_empty() {
        return Ok(());
    }
    let (component, sizes) = components(nodes);
    let count = sizes.len();
    let mut edges = vec![Vec::new(); count];
    let mut incoming = vec![0usize; count];
    for (id, node) in nodes.iter().enumerate() {
        for &(target, _, _) in &node.edges {
            let (from, to) = (component[id], component[target]);
            if from != to {
                edges[from].push(to);
                incoming[to] += 1;
            }
        }
    }
    let mut paths = vec![0u64; count];
    paths[component[0]] = 1;
    let mut ready: Vec<usize> = (0..count).filter(|&c| incoming[c] == 0).collect();
    while let Some(c) = ready.pop() {
        if paths[c] > MAX_EVALUATION_PATHS {
            return Err(format!(
                "one of its subschemas is reached in {} ways (more than {MAX_EVALUATION_PATHS}): keywords that apply the same subschema twice, down a chain, double the evaluations at every link",
                paths[c]
            ));
        }
        for &to in &edges[c] {
            paths[to] = paths[to].saturating_add(paths[c]);
            incoming[to] -= 1;
            if incoming[to] == 0 {
                ready.push(to);
            }
        }
    }
    Ok(())
}

/// The strongly connected component of every node, over all edges (Kosaraju, iterative).
fn components(nodes: &[Node<'_>]) -> (Vec<usize>, Vec<usize>) {
    let n = nodes.len();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for start in 0..n {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut stack = vec![(start, 0usize)];
        while let Some(top) = stack.last_mut() {
            let (id, next) = *top;
            if let Some(&(target, _, _)) = nodes[id].edges.get(next) {
                top.1 += 1;
                if !seen[target] {
                    seen[target] = true;
                    stack.push((target, 0));
                }
            } else {
                order.push(id);
                stack.pop();
            }
        }
    }
    let mut reverse = vec![Vec::new(); n];
    for (id, node) in nodes.iter().enumerate() {
        for &(target, _, _) in &node.edges {
            reverse[target].push(id);
        }
    }
    let mut component = vec![usize::MAX; n];
    let mut sizes = Vec::new();
    for &start in order.iter().rev() {
        if component[start] != usize::MAX {
            continue;
        }
        let c = sizes.len();
        sizes.push(0);
        component[start] = c;
        let mut stack = vec![start];
        while let Some(id) = stack.pop() {
            sizes[c] += 1;
            for &source in &reverse[id] {
                if component[source] == usize::MAX {
                    component[source] = c;
                    stack.push(source);
                }
            }
        }
    }
    (component, sizes)
}

/// In a recursive schema, one child value must not be evaluated against more than one
/// schema that recurses again: the evaluations would double at every level of the input
/// (`allOf: [{$ref: "#/$defs/t"}, {$ref: "#/$defs/t"}]` with `t` descending back to `#`).
/// Runs after [`check_in_place`], so the in-place edges form a DAG.
fn check_growth(nodes: &[Node<'_>]) -> Result<(), String> {
    let (component, sizes) = components(nodes);
    let mut paths = vec![0u64; nodes.len()];
    for start in 0..nodes.len() {
        if sizes[component[start]] < 2 {
            continue;
        }
        // the in-place closure of `start`, in topological order
        let mut order = Vec::new();
        let mut seen = std::collections::HashSet::new();
        seen.insert(start);
        let mut stack = vec![(start, 0usize)];
        while let Some(top) = stack.last_mut() {
            let (id, next) = *top;
            match nodes[id].edges[next.min(nodes[id].edges.len())..]
                .iter()
                .position(|e| e.1)
            {
                Some(offset) => {
                    top.1 = next + offset + 1;
                    let target = nodes[id].edges[next + offset].0;
                    if seen.insert(target) {
                        stack.push((target, 0));
                    }
                }
                None => {
                    order.push(id);
                    stack.pop();
                }
            }
        }
        for &id in &order {
            paths[id] = 0;
        }
        paths[start] = 1;
        let mut tally: HashMap<&Group, u64> = HashMap::new();
        for &id in order.iter().rev() {
            let here = paths[id];
            for &(target, in_place, _) in &nodes[id].edges {
                if in_place {
                    paths[target] = paths[target].saturating_add(here);
                }
            }
            for (target, group) in &nodes[id].descents {
                if component[*target] == component[start] && *group != Group::Leaf {
                    *tally.entry(group).or_default() += here;
                }
            }
        }
        let any_key = tally.get(&Group::AnyKey).copied().unwrap_or(0);
        for (group, &count) in &tally {
            let count = match group {
                Group::Key(_) => count + any_key,
                _ => count,
            };
            if count > 1 {
                let which = match group {
                    Group::Key(key) => format!("property \"{key}\""),
                    Group::AnyKey => "a property".to_owned(),
                    Group::Item => "an item".to_owned(),
                    Group::Index(i) => format!("item {i}"),
                    Group::Leaf => "a name".to_owned(),
                };
                return Err(format!(
                    "{which} of a value would be evaluated by {count} schemas that each recurse again, so the evaluations would multiply at every level of the input"
                ));
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Mark {
    New,
    Open,
    Done,
}

/// Depth-first over the in-place edges: a cycle, a chain longer than
/// [`MAX_IN_PLACE_CHAIN`], or more than [`MAX_IN_PLACE_EVALUATIONS`] evaluations is an error.
fn check_in_place(nodes: &[Node<'_>]) -> Result<(), String> {
    let mut mark = vec![Mark::New; nodes.len()];
    let mut longest = vec![0usize; nodes.len()];
    let mut count = vec![0u64; nodes.len()];
    for start in 0..nodes.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // (node, next edge, the reference that led here)
        let mut stack: Vec<(usize, usize, Option<&str>)> = vec![(start, 0, None)];
        mark[start] = Mark::Open;
        while let Some(top) = stack.last_mut() {
            let (id, next) = (top.0, top.1);
            let edge = nodes[id].edges[next..]
                .iter()
                .position(|e| e.1)
                .map(|offset| next + offset);
            match edge {
                Some(at) => {
                    top.1 = at + 1;
                    let (target, _, via) = nodes[id].edges[at];
                    match mark[target] {
                        Mark::Open => {
                            let from = stack.iter().position(|f| f.0 == target).unwrap_or(0);
                            let mut refs: Vec<String> = stack[from + 1..]
                                .iter()
                                .filter_map(|f| f.2)
                                .chain(via)
                                .map(|r| format!("\"{r}\""))
                                .collect();
                            refs.dedup();
                            return Err(format!(
                                "its references loop without descending into the input ({}), so its evaluation would never end",
                                refs.join(" → ")
                            ));
                        }
                        Mark::New => {
                            mark[target] = Mark::Open;
                            stack.push((target, 0, via));
                        }
                        Mark::Done => {}
                    }
                }
                None => {
                    let children = nodes[id].edges.iter().filter(|e| e.1).map(|e| e.0);
                    let (mut deepest, mut total) = (0usize, 1u64);
                    for child in children {
                        deepest = deepest.max(longest[child]);
                        total = total.saturating_add(count[child]);
                    }
                    longest[id] = deepest + 1;
                    count[id] = total;
                    mark[id] = Mark::Done;
                    if longest[id] > MAX_IN_PLACE_CHAIN {
                        return Err(format!(
                            "it applies more than {MAX_IN_PLACE_CHAIN} schemas in a chain to one value"
                        ));
                    }
                    if total > MAX_IN_PLACE_EVALUATIONS {
                        return Err(format!(
                            "one value would be evaluated against more than {MAX_IN_PLACE_EVALUATIONS} subschemas"
                        ));
                    }
                    stack.pop();
                }
            }
        }
    }
    Ok(())
}
