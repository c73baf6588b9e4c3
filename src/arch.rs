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

impl FromStr for Arch {
    type Err = crate::Error;
    /// Accepts sm_90, 90, 9.0, and sm_90a (the same GPU: a build adds the suffix itself where its
    /// kernel uses that architecture's own instructions).
    fn from_str(s: &str) -> crate::Result<Self> {
        let bad = || {
            crate::Error::InvalidArgument(format!(
                "unknown architecture '{s}' (allowed: sm_XY such as sm_80, sm_90)"
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
        if !(5..=12).contains(&major) {
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
}
