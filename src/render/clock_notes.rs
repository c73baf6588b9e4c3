//! Why a ratio in a run's tables and charts is not a comparison at one clock: a share of the
//! ceiling (the vendor library's clocks against the row's) and a speedup over sync (sync's against
//! the row's). A starred cell points to these notes; where the reference itself was timed while
//! its clock moved, one note says that every ratio to it mixes clocks.

use crate::results::{Bound, Perf, RunResults, Timing};

/// The column of a row's share of the ceiling: "% of copy", or "% of cuBLAS".
pub fn ceiling_column<P>(r: &RunResults<P>) -> String {
    match r.workload.bound {
        Bound::Memory => "% of copy".into(),
        Bound::Compute => format!(
            "% of {}",
            r.vendor
                .as_ref()
                .map(|v| v.name.as_str())
                .or(r.ceiling_peer.as_deref())
                .unwrap_or("vendor")
        ),
    }
}

/// Why a row's ratios are not comparisons at one clock, each where it is not.
#[derive(Debug, Default)]
pub struct RatioClocks {
    /// Its share of the ceiling: as the run judged it, or, in results recorded before runs did,
    /// judged here from the vendor library's clocks and its own.
    pub ceiling: Option<String>,
    /// Its speedup over sync: sync's clocks and its own.
    pub sync: Option<String>,
}

/// The clocks behind a row's ratios (`t`, `p`: its timing and figures).
pub fn ratio_clocks<P>(r: &RunResults<P>, t: Option<&Timing>, p: Option<&Perf>) -> RatioClocks {
    let (Some(t), Some(p)) = (t, p) else {
        return RatioClocks::default();
    };
    let Some(mine) = t.clocks.as_ref() else {
        return RatioClocks::default();
    };
    let against = |name: &str, theirs: Option<&Timing>| {
        crate::clocks::unmatched(name, theirs?.clocks.as_ref()?, mine)
    };
    let vendor = r.vendor.as_ref();
    let sync = r.baseline().and_then(|b| b.timing.as_ref());
    RatioClocks {
        // a share taken at one clock (`Perf::matched`) is the one shown, and needs no star
        ceiling: p
            .pct_of_ceiling
            .filter(|_| p.matched.is_none())
            .and_then(|_| {
                p.ceiling_clocks
                    .clone()
                    .or_else(|| against(&vendor?.name, vendor?.timing.as_ref()))
            }),
        sync: p
            .speedup_vs_sync
            .filter(|_| !sync.is_some_and(|s| std::ptr::eq(s, t)))
            .and_then(|_| against("sync", sync)),
    }
}

/// Why the starred ratios are at unequal clocks, per column: one line where the reference
/// itself (the vendor library, sync) was timed while its clock moved, which stars every ratio to
/// it; else one line per starred row ("name vs sync*: why").
pub fn clock_notes<P>(r: &RunResults<P>) -> Vec<String> {
    let rows: Vec<(String, RatioClocks)> = r
        .variants
        .iter()
        .filter(|v| v.control.is_none())
        .map(|v| (v.name.clone(), v.timing.as_ref(), v.perf.as_ref()))
        .chain(r.peers.iter().map(|p| {
            (
                format!("{} (peer)", p.name),
                p.timing.as_ref(),
                p.perf.as_ref(),
            )
        }))
        .map(|(name, t, p)| (name, ratio_clocks(r, t, p)))
        .collect();
    let starred = |why: fn(&RatioClocks) -> &Option<String>| -> Vec<(&str, &str)> {
        rows.iter()
            .filter_map(|(name, c)| Some((name.as_str(), why(c).as_deref()?)))
            .collect()
    };
    let vendor = r
        .vendor
        .as_ref()
        .map(|v| (v.name.as_str(), v.timing.as_ref()));
    let sync = r.baseline().map(|b| (b.name.as_str(), b.timing.as_ref()));
    let mut notes = column_notes(&ceiling_column(r), vendor, starred(|c| &c.ceiling));
    notes.extend(column_notes("vs sync", sync, starred(|c| &c.sync)));
    notes
}

/// `clock_notes` of one column: its reference (name, timing) and its starred rows (name, why).
fn column_notes(
    column: &str,
    reference: Option<(&str, Option<&Timing>)>,
    starred: Vec<(&str, &str)>,
) -> Vec<String> {
    let moved =
        reference.and_then(|(name, t)| Some((name, crate::clocks::sm_moved(t?.clocks.as_ref()?)?)));
    match moved {
        Some((name, (lo, hi))) if !starred.is_empty() => vec![format!(
            "{column}*: {name}'s SM clock moved {lo}..{hi} MHz while it was timed, so every ratio to it mixes clocks"
        )],
        _ => starred
            .into_iter()
            .map(|(name, why)| format!("{name} {column}*: {why}"))
            .collect(),
    }
}
