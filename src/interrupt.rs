//! Ctrl-C. The binary's handler sets a flag; the long loops (run, check, sweep) look at it between
//! kernels and stop with `Error::Interrupted`, keeping what they measured, and the command exits
//! 130. The library installs nothing itself.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every loop to stop at its next kernel boundary. Returns whether it had been asked before.
pub fn request() -> bool {
    REQUESTED.swap(true, Ordering::SeqCst)
}

pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// `Err(Interrupted)` once a stop was asked for.
pub fn check() -> crate::Result<()> {
    if requested() {
        Err(crate::Error::Interrupted)
    } else {
        Ok(())
    }
}
