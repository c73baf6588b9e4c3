//! The host memory the machine has to spare (MemAvailable in /proc/meminfo), so that a problem
//! too large for the host is refused before any GPU work instead of aborting in an allocation.

use crate::{Error, Result};

/// Refuses `needed` bytes of host memory for `what` when more than `available`; None (not known)
/// lets it through.
pub fn check(what: &str, needed: u64, available: Option<u64>) -> Result<()> {
    match available {
        Some(avail) if needed > avail => Err(Error::InvalidShape(format!(
            "{what}: {needed} bytes ({} MiB) of host memory needed, {avail} bytes ({} MiB) available; \
             allowed: at most the memory available, e.g. fewer tokens or tiles",
            needed >> 20,
            avail >> 20
        ))),
        _ => Ok(()),
    }
}

/// Bytes of MemAvailable, or None where /proc/meminfo cannot be read or does not say (then the
/// host-memory checks are skipped).
pub fn available() -> Option<u64> {
    parse_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// MemAvailable from the text of /proc/meminfo (`MemAvailable:   123456 kB`), in bytes.
pub fn parse_available(meminfo: &str) -> Option<u64> {
    let line = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?;
    let mut words = line.split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_mem_available_in_bytes() {
        let text =
            "MemTotal:       16384000 kB\nMemFree:         1000 kB\nMemAvailable:    8192000 kB\n";
        assert_eq!(parse_available(text), Some(8192000 * 1024));
        assert_eq!(parse_available("MemTotal: 5 kB\n"), None);
        assert_eq!(parse_available("MemAvailable: lots kB\n"), None);
        assert_eq!(
            parse_available("MemAvailable: 18446744073709551615 kB\n"),
            None
        );
    }

    #[test]
    fn more_than_available_is_refused_with_both_numbers() {
        assert!(check("x", 10, None).is_ok());
        assert!(check("x", 10, Some(10)).is_ok());
        let e = check("the buffers", 3 << 30, Some(1 << 30))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the buffers: 3221225472 bytes (3072 MiB) of host memory needed")
                && e.contains("1073741824 bytes (1024 MiB) available")
                && e.contains("allowed:"),
            "{e}"
        );
    }
}
