//! Compute capability as NVRTC and the SASS tools name it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
}

impl Arch {
    pub fn sm(self) -> u32 {
        self.major * 10 + self.minor
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}{}", self.major, self.minor)
    }
}

/// The compute capabilities NVIDIA has shipped (major, minor): a name outside them is a typo.
const KNOWN: [(u32, u32); 21] = [
    (5, 0),
    (5, 2),
    (5, 3),
    (6, 0),
    (6, 1),
    (6, 2),
    (7, 0),
    (7, 2),
    (7, 5),
    (8, 0),
    (8, 6),
    (8, 7),
    (8, 8),
    (8, 9),
    (9, 0),
    (10, 0),
    (10, 1),
    (10, 3),
    (11, 0),
    (12, 0),
    (12, 1),
];

impl FromStr for Arch {
    type Err = crate::Error;
    /// Accepts sm_90, 90, 9.0, and sm_90a (the same GPU: a build adds the suffix itself where its
    /// kernel uses that architecture's own instructions).
    fn from_str(s: &str) -> crate::Result<Self> {
        let bad = || {
            let names: Vec<String> = KNOWN.iter().map(|(a, b)| format!("sm_{a}{b}")).collect();
            crate::Error::InvalidArgument(format!(
                "unknown architecture '{s}' (allowed: {}, each also as X.Y or with an `a` suffix)",
                names.join(", ")
            ))
        };
        let t = s.trim().trim_start_matches("sm_");
        let t = t.strip_suffix('a').unwrap_or(t);
        let (major, minor) = match t.split_once('.') {
            Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
            None if t.len() >= 2 && t.chars().all(|c| c.is_ascii_digit()) => {
                let (a, b) = t.split_at(t.len() - 1);
                (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?)
            }
            None => return Err(bad()),
        };
        if !KNOWN.contains(&(major, minor)) {
            return Err(bad());
        }
        Ok(Arch { major, minor })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_all_spellings() {
        for s in ["sm_90", "90", "9.0", "sm_90a"] {
            assert_eq!(s.parse::<Arch>().unwrap(), Arch { major: 9, minor: 0 });
        }
        assert_eq!("sm_86".parse::<Arch>().unwrap().to_string(), "sm_86");
        assert_eq!("sm_100".parse::<Arch>().unwrap().sm(), 100);
        assert!("sm_x".parse::<Arch>().is_err());
        assert!("1".parse::<Arch>().is_err());
    }

    #[test]
    fn an_architecture_nvidia_never_shipped_is_refused_naming_those_it_did() {
        for s in ["sm_99", "sm_91", "9.9", "sm_130"] {
            let e = s.parse::<Arch>().unwrap_err().to_string();
            assert!(e.contains(&format!("unknown architecture '{s}'")), "{e}");
            assert!(
                e.contains("sm_80, sm_86") && e.contains("sm_90, sm_100"),
                "{e}"
            );
        }
        for s in ["sm_70", "sm_75", "sm_89", "sm_103", "sm_120", "sm_100a"] {
            assert!(s.parse::<Arch>().is_ok(), "{s}");
        }
    }
}
