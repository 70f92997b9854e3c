/**
 * How a transport serves the tasks extension: the {@link McpTasks} of a manager on its store
 * (when the store has tasks), and the periodic sweep that fails the tasks of runs whose process
 * stopped and deletes expired ones. `serveHttp` and `serveStdio` both use it.
 */
import type { ToolStore } from '../runtime/store/types.js'
import { NO_TASKS_SUPPORT } from '../runtime/store/tasks.js'
import type { ServableManager } from './meta.js'
import { McpTasks, type TaskManager } from './tasks.js'

/** How often a served transport sweeps the tasks (outcome unknown after a crash, expiry), in ms. */
export const TASK_SWEEP_MS = 60_000

/** The tasks a transport serves, and how it stops them. */
export interface ServedTasks {
  readonly tasks: McpTasks
  /** Stops the sweep and resolves when every run started here has recorded its outcome. */
  close(): Promise<void>
}

/**
 * The tasks extension of `tm` on `store`, sweeping every {@link TASK_SWEEP_MS}, when the store
 * has a task table and the manager can answer tasks; otherwise undefined (the extension is not
 * advertised), said once to `onError` when a store lacks tasks.
 */
export function serveTasks(tm: ServableManager, store: ToolStore | undefined, onError: (error: Error) => void, confirmationsAtPage = false): ServedTasks | undefined {
  if (store === undefined) return undefined
  const m = tm as Partial<TaskManager>
  if (typeof m.resume !== 'function' || typeof m.cancel !== 'function' || typeof m.recover !== 'function') return undefined
  const tasks = McpTasks.open(tm as unknown as TaskManager, store, { onError: (e) => onError(e instanceof Error ? e : new Error(String(e))), confirmationsAtPage })
  if (tasks === undefined) {
    onError(new Error(`toolwire: ${NO_TASKS_SUPPORT}`))
    return undefined
  }
  // runs whose process stopped become failed tasks, and expired tasks go (every instance may sweep)
  const sweep = setInterval(() => void tasks.sweep().catch(onError), TASK_SWEEP_MS)
  sweep.unref()
  return {
    tasks,
    close: async () => {
      clearInterval(sweep)
      await tasks.idle()
    },
  }
}
