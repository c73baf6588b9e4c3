//! What the compile tests share: NVRTC and the CUDA headers, or the reason the test is skipped.

use tilepipe::toolchain::Toolchain;

/// The toolchain and NVRTC's version ("13.0"), or None after saying why the test is skipped.
/// With TILEPIPE_REQUIRE_NVRTC set (CI) a missing NVRTC or header folder fails the test instead.
pub fn nvrtc() -> Option<(Toolchain, String)> {
    let tc = Toolchain::discover();
    let found = tilepipe::gpu::nvrtc::version()
        .map_err(|e| e.to_string())
        .and_then(|v| match tc.include_dirs.is_empty() {
            true => Err("no CUDA headers (set CUDA_HOME)".to_string()),
            false => Ok(v),
        });
    match found {
        Ok((a, b)) => Some((tc, format!("{a}.{b}"))),
        Err(why) if std::env::var_os("TILEPIPE_REQUIRE_NVRTC").is_none() => {
            eprintln!("skipped: {why}; .ci/run installs NVRTC and the headers");
            None
        }
        Err(why) => panic!("TILEPIPE_REQUIRE_NVRTC is set: {why}"),
    }
}
