//! What ptxas says of a build besides its errors: its performance warnings, read from the compile
//! log (NVRTC's, or the cache's copy of it).

/// ptxas's warning that it serialised wgmma in `function` (any function when None): C7510 and on,
/// "wgmma.mma_async instructions are serialized due to ...", the MMAs then waiting for each other.
/// A slow kernel, still a correct one.
pub fn wgmma_serialised(log: &str, function: Option<&str>) -> Option<String> {
    log.lines()
        .filter(|l| l.contains("wgmma") && l.contains("serializ"))
        .find(|l| function.is_none_or(|f| l.contains(&format!("'{f}'"))))
        .map(|l| l.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serialised_wgmma_is_found_in_the_log_for_its_function() {
        let log = "ptxas info    : (C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized due to insufficient register resources for the function 'k'\n";
        assert!(wgmma_serialised(log, None).unwrap().contains("C7512"));
        assert!(wgmma_serialised(log, Some("k")).is_some());
        assert_eq!(wgmma_serialised(log, Some("other")), None);
        assert_eq!(
            wgmma_serialised("ptxas info    : 0 bytes stack frame", None),
            None
        );
        assert_eq!(wgmma_serialised("", None), None);
    }
}
