//! Instruction census of one kernel and the classification of its movement and synchronisation
//! instructions.

use super::parse::Function;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Counts of every opcode-with-modifiers in a kernel, plus the derived movement classes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Census {
    pub kernel: String,
    pub total: u32,
    pub opcodes: BTreeMap<String, u32>,
}

/// Byte width of a load/store from its modifiers: .128 / .64 / .U16 / .S16 / .U8 / .S8, else 4.
pub fn access_width(opcode: &str) -> u32 {
    let mods: Vec<&str> = opcode.split('.').skip(1).collect();
    if mods.contains(&"128") {
        16
    } else if mods.contains(&"64") {
        8
    } else if mods.iter().any(|m| *m == "U16" || *m == "S16") {
        2
    } else if mods.iter().any(|m| *m == "U8" || *m == "S8") {
        1
    } else {
        4
    }
}

fn base(opcode: &str) -> &str {
    opcode.split('.').next().unwrap_or(opcode)
}

impl Census {
    /// Counts every instruction that can execute; `@!PT` (never true) placeholders are left out.
    pub fn of(f: &Function) -> Census {
        let mut opcodes = BTreeMap::new();
        let live: Vec<_> = f
            .instructions
            .iter()
            .filter(|i| i.predicate.as_deref() != Some("@!PT"))
            .collect();
        for i in &live {
            match opcodes.get_mut(&i.opcode) {
                Some(n) => *n += 1,
                None => {
                    opcodes.insert(i.opcode.clone(), 1);
                }
            }
        }
        Census {
            kernel: f.name.clone(),
            total: live.len() as u32,
            opcodes,
        }
    }

    /// Total of opcodes whose base (text before the first dot) is `b`.
    pub fn count(&self, b: &str) -> u32 {
        self.opcodes
            .iter()
            .filter(|(k, _)| base(k) == b)
            .map(|(_, n)| n)
            .sum()
    }

    /// Opcodes with base `b`, with counts, e.g. "LDGSTS.E.BYPASS.128 x8".
    pub fn forms(&self, b: &str) -> Vec<String> {
        self.opcodes
            .iter()
            .filter(|(k, _)| base(k) == b)
            .map(|(k, n)| format!("{k} x{n}"))
            .collect()
    }

    /// LDGSTS of `bytes` per thread, L1-bypassing when `bypass`.
    pub fn ldgsts(&self, bytes: u32, bypass: bool) -> u32 {
        self.opcodes
            .iter()
            .filter(|(k, _)| {
                base(k) == "LDGSTS" && access_width(k) == bytes && k.contains(".BYPASS") == bypass
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// Instructions with base `b` that move `bytes` each.
    pub fn of_width(&self, b: &str, bytes: u32) -> u32 {
        self.opcodes
            .iter()
            .filter(|(k, _)| base(k) == b && access_width(k) == bytes)
            .map(|(_, n)| n)
            .sum()
    }

    /// Widths of global loads, e.g. [16, 2].
    pub fn ldg_widths(&self) -> Vec<u32> {
        self.widths("LDG")
    }

    /// Widths of the instructions with base `b`, e.g. [4, 16].
    pub fn widths(&self, b: &str) -> Vec<u32> {
        let mut w: Vec<u32> = self
            .opcodes
            .keys()
            .filter(|k| base(k) == b)
            .map(|k| access_width(k))
            .collect();
        w.sort_unstable();
        w.dedup();
        w
    }

    /// The movement and synchronisation classes named in the report.
    pub fn movement(&self) -> BTreeMap<String, u32> {
        let classes = [
            "LDGSTS",
            "LDGDEPBAR",
            "DEPBAR",
            "UBLKCP",
            "UTMALDG",
            "UTMAPF",
            "SYNCS",
            "ARRIVES",
            "BAR",
            "LDG",
            "STS",
            "LDS",
            "STG",
            "LDL",
            "STL",
        ];
        classes
            .iter()
            .map(|c| (c.to_string(), self.count(c)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// One line naming the copy instructions found, e.g. "LDGSTS.E.BYPASS.128 x8, LDGDEPBAR x2".
    pub fn movement_summary(&self) -> String {
        let mut parts = Vec::new();
        for b in [
            "UTMALDG",
            "UBLKCP",
            "LDGSTS",
            "LDGDEPBAR",
            "DEPBAR",
            "ARRIVES",
        ] {
            parts.extend(self.forms(b));
        }
        if parts.is_empty()
            || self.count("LDGSTS") + self.count("UBLKCP") + self.count("UTMALDG") == 0
        {
            let list = |b: &str| {
                let w: Vec<String> = self.widths(b).iter().map(|w| format!("{w} B")).collect();
                w.join(", ")
            };
            // STS widths shown: a tile staged through shared memory stores at its copy width, a
            // tile read in place (direct) leaves only the compute body's narrow partials
            parts.push(format!(
                "synchronous LDG ({}) + STS ({})",
                list("LDG"),
                list("STS")
            ));
        }
        parts.join(", ")
    }

    /// The loads and shared stores a direct claim is read from, e.g. "LDG.E.128 x4, STS x2"
    /// (asynchronous copies and generic loads first, where there are any).
    pub fn direct_summary(&self) -> String {
        let mut parts = Vec::new();
        for b in ["UTMALDG", "UBLKCP", "LDGSTS", "LD", "LDG", "STS"] {
            parts.extend(self.forms(b));
        }
        if self.count("STS") == 0 {
            parts.push("no STS".into());
        }
        parts.join(", ")
    }
}
