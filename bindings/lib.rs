//! napi-rs glue over the `toolwire` core. No logic lives here: each export forwards
//! to the core and maps its errors.

pub mod metrics;
pub mod render;
pub mod result;
pub mod schema;
