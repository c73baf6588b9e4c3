//! Protocol facts read from the emitted SASS beside the census. One today, a hazard known from
//! other projects' bug trackers: mbarriers initialised by one thread and waited on by others
//! before a block-wide barrier has published the initialisation.

use super::parse::Function;

/// For a kernel that initialises mbarriers (`SYNCS.EXCH.64`): whether a block-wide barrier
/// (`BAR.SYNC` on barrier 0 without a thread count) stands after the last initialisation and
/// before the first phase wait (`SYNCS.PHASECHK`), in listing order. The initialisation runs once
/// at the top of these kernels, before any loop, so listing order is execution order there.
/// None when the kernel initialises no mbarrier.
pub fn init_published(f: &Function) -> Option<Result<String, String>> {
    let at = |pred: fn(&str, &str) -> bool| -> Vec<u32> {
        f.instructions
            .iter()
            .filter(|i| pred(&i.opcode, &i.operands))
            .map(|i| i.offset)
            .collect()
    };
    let last_init = *at(|op, _| op.starts_with("SYNCS.EXCH.64")).iter().max()?;
    let first_wait = at(|op, _| op.starts_with("SYNCS.PHASECHK"))
        .into_iter()
        .min();
    let barrier = at(|op, args| op.starts_with("BAR.SYNC") && args == "0x0")
        .into_iter()
        .find(|&b| b > last_init && first_wait.is_none_or(|w| b < w));
    Some(match (barrier, first_wait) {
        (Some(b), Some(w)) => Ok(format!(
            "mbarrier init (last at {last_init:#06x}) published by BAR.SYNC 0x0 at {b:#06x} before the first wait at {w:#06x}"
        )),
        (Some(b), None) => Ok(format!(
            "mbarrier init (last at {last_init:#06x}) published by BAR.SYNC 0x0 at {b:#06x}; no wait"
        )),
        (None, w) => Err(format!(
            "no block barrier between the last mbarrier init at {last_init:#06x} and the first wait{}",
            w.map_or(String::new(), |w| format!(" at {w:#06x}"))
        )),
    })
}
