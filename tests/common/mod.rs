//! What the compile tests share: NVRTC and the CUDA headers. A test that needs them is ignored,
//! with the reason, where build.rs did not find them; here they were found (or
//! TILEPIPE_REQUIRE_NVRTC is set), so their absence now fails it.

use tilepipe::toolchain::Toolchain;

/// The toolchain and NVRTC's version ("13.0").
pub fn nvrtc() -> (Toolchain, String) {
    let tc = Toolchain::discover();
    let found = tilepipe::gpu::nvrtc::version()
        .map_err(|e| e.to_string())
        .and_then(|v| match tc.include_dirs.is_empty() {
            true => Err("no CUDA headers (set CUDA_HOME)".to_string()),
            false => Ok(v),
        });
    match found {
        Ok((a, b)) => (tc, format!("{a}.{b}")),
        Err(why) => {
            panic!("found at build time (or TILEPIPE_REQUIRE_NVRTC is set), missing now: {why}")
        }
    }
}
