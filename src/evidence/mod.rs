//! What a build proves about itself: the SASS (census, the attestation of its claimed mechanism,
//! protocol checks) and its resources (registers, shared memory, occupancy and its limiter).

pub mod resources;
pub mod sass;
