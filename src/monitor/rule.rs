//! The monitor's rules (the MON_* codes of kernels/common/monitor.cuh) and what a violation of
//! each says, with its numbers.

use super::Violation;
use serde::{Deserialize, Serialize};

/// How a copy departs from its plan (a tail-read record's `d`: MON_PLAN_*); 0 is another address
/// or byte count inside the data.
pub(crate) const PLAN_PAST: i32 = 1;
pub(crate) const PLAN_SKIPPED: i32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// A slot refilled while readers of its previous step had not released it (a count across
    /// threads: the stress perturbation opens its window).
    RefillEarly,
    /// A refill without its protocol's acquire: the ring's empty-barrier wait, cuda::pipeline's
    /// producer_acquire, or this thread's own read of the slot's previous step and a block barrier.
    RefillUnacquired,
    /// A step read with no wait for its completion.
    ReadUnwaited,
    /// cp.async: a step read whose commit group the last wait_group did not cover.
    ReadIncomplete,
    /// A step read with no block barrier after its completion (other threads' copies unpublished).
    ReadUnpublished,
    /// A slot found holding another step than the one read (at the read's start or end).
    SlotHoldsOther,
    /// An mbarrier waited on the wrong phase parity.
    WaitParity,
    /// A step's expect_tx differs from the bytes its copies bring.
    TxMismatch,
    InitMissing,
    /// An mbarrier used by a thread with no block barrier since another thread initialised it.
    InitUnsynced,
    InitCount,
    /// An async copy completes on an mbarrier whose init no fence.mbarrier_init published.
    FenceMissing,
    /// A slot released for a step its releaser had not finished reading.
    ReleaseUnread,
    /// A slot released while wgmma groups still read it.
    WgmmaInflight,
    /// A copy's source differs from the copy plan's: above all, a unit past an edge (the K tail)
    /// read instead of zero-filled.
    TailRead,
    IssuePastEnd,
    /// A walk ended with a thread's issued or read steps short of (or past) the block's.
    Drain,
    /// Cluster: a slot released to fewer CTAs than multicast into it.
    ReleasePartial,
    /// A TMA store of a staged tile some of whose writers had not fenced their writes to the
    /// async proxy when they passed the store's barrier.
    StoreUnfenced,
    /// Turns: a consumer warpgroup read a turn's steps with no wait for the turn.
    TurnUnwaited,
}

impl Rule {
    pub const ALL: [Rule; 20] = [
        Rule::RefillEarly,
        Rule::RefillUnacquired,
        Rule::ReadUnwaited,
        Rule::ReadIncomplete,
        Rule::ReadUnpublished,
        Rule::SlotHoldsOther,
        Rule::WaitParity,
        Rule::TxMismatch,
        Rule::InitMissing,
        Rule::InitUnsynced,
        Rule::InitCount,
        Rule::FenceMissing,
        Rule::ReleaseUnread,
        Rule::WgmmaInflight,
        Rule::TailRead,
        Rule::IssuePastEnd,
        Rule::Drain,
        Rule::ReleasePartial,
        Rule::StoreUnfenced,
        Rule::TurnUnwaited,
    ];

    /// The MON_* code (1-based, in `ALL`'s order).
    pub fn code(self) -> u32 {
        Rule::ALL.iter().position(|&r| r == self).unwrap() as u32 + 1
    }

    pub fn from_code(code: u32) -> Option<Rule> {
        code.checked_sub(1)
            .and_then(|i| Rule::ALL.get(i as usize).copied())
    }

    pub fn name(self) -> &'static str {
        match self {
            Rule::RefillEarly => "refill-before-release",
            Rule::RefillUnacquired => "refill-unacquired",
            Rule::ReadUnwaited => "read-unwaited",
            Rule::ReadIncomplete => "read-incomplete-group",
            Rule::ReadUnpublished => "read-unpublished",
            Rule::SlotHoldsOther => "slot-holds-other-step",
            Rule::WaitParity => "wait-parity",
            Rule::TxMismatch => "tx-bytes",
            Rule::InitMissing => "init-missing",
            Rule::InitUnsynced => "init-unsynced",
            Rule::InitCount => "init-count",
            Rule::FenceMissing => "fence-missing",
            Rule::ReleaseUnread => "release-unread",
            Rule::WgmmaInflight => "wgmma-in-flight",
            Rule::TailRead => "tail-read",
            Rule::IssuePastEnd => "issue-past-end",
            Rule::Drain => "drain",
            Rule::ReleasePartial => "release-partial",
            Rule::StoreUnfenced => "store-unfenced",
            Rule::TurnUnwaited => "turn-unwaited",
        }
    }
}

fn step_or_none(s: i32) -> String {
    if s < 0 {
        "none".into()
    } else {
        format!("step {s}")
    }
}

/// Which mbarrier a barrier rule's kind names: the ring's full[s] (0) or empty[s] (1), or a
/// memcpy_async slot's cuda::barrier.
fn barrier(v: &Violation, kind: i32) -> String {
    match (v.build.is_ring(), kind) {
        (true, 0) => format!("full[{}]", v.slot),
        (true, _) => format!("empty[{}]", v.slot),
        (false, _) => format!("the barrier of slot {}", v.slot),
    }
}

fn tensor(code: i32) -> &'static str {
    match code {
        0 => "X",
        1 => "A",
        2 => "B",
        _ => "an unknown tensor",
    }
}

/// What `v` says, with its numbers.
pub(super) fn message(v: &Violation) -> String {
    let (s, k, [a, b, c, d, e, f]) = (v.slot, v.step, v.counts);
    let prev = k - v.build.stages as i32;
    match v.rule {
        Rule::RefillEarly => format!(
            "slot {s} refilled for step {k} while {} of {b} readers of step {prev} had not released it",
            b - a
        ),
        Rule::RefillUnacquired if v.build.is_ring() => format!(
            "slot {s} refilled for step {k} with no wait on empty[{s}] for the release of step {prev} (the producer's last wait there: {})",
            step_or_none(a)
        ),
        Rule::RefillUnacquired if v.build.mech == 3 => format!(
            "copies of step {k} into slot {s} issued with no producer_acquire outstanding ({a} acquired, {b} committed)"
        ),
        Rule::RefillUnacquired if a != prev => format!(
            "slot {s} refilled for step {k} before this thread finished reading step {prev} (the last it finished there: {})",
            step_or_none(a)
        ),
        Rule::RefillUnacquired => format!(
            "slot {s} refilled for step {k} with no block barrier since this thread read step {prev} (barrier {b} then and now)"
        ),
        Rule::ReadUnwaited => format!(
            "step {k} read from slot {s} with no wait for its completion (the last completion this thread saw there: {})",
            step_or_none(a)
        ),
        Rule::ReadIncomplete if c < 0 => format!(
            "step {k} read from slot {s}, its copies in cp.async group {a}, before any wait_group ({b} committed)"
        ),
        Rule::ReadIncomplete if b - c <= 0 => format!(
            "step {k} read from slot {s}, its copies in cp.async group {a}, after wait_group {c} with {b} committed, which waits for no group"
        ),
        Rule::ReadIncomplete => format!(
            "step {k} read from slot {s}, its copies in cp.async group {a}, after wait_group {c} with {b} committed, which waits for groups 0..{} only",
            b - c - 1
        ),
        Rule::ReadUnpublished => format!(
            "step {k} read from slot {s} with no block barrier since its completion (barrier {a} then, {b} at the read): other threads' copies of it may not be visible"
        ),
        Rule::SlotHoldsOther if b == 0 => {
            format!(
                "step {k} read from slot {s}, which holds {}",
                step_or_none(a)
            )
        }
        Rule::SlotHoldsOther => {
            format!("slot {s} refilled for step {a} while this thread read step {k}")
        }
        Rule::WaitParity => format!(
            "{} waited on phase parity {} for step {k}, whose phase has parity {a}",
            barrier(v, b),
            v.phase
        ),
        Rule::TxMismatch => {
            format!("full[{s}] announced {a} bytes for step {k}; its copies bring {b}")
        }
        Rule::InitMissing => format!("{} used before its init (step {k})", barrier(v, a)),
        Rule::InitUnsynced => format!(
            "{} used with no block barrier since thread {b} initialised it (step {k})",
            barrier(v, a)
        ),
        Rule::InitCount => format!(
            "{} initialised for {b} arrivals a phase; its protocol has {c}",
            barrier(v, a)
        ),
        Rule::FenceMissing => format!(
            "a copy of step {k} completes on full[{s}], whose init no fence.mbarrier_init published to the async proxy"
        ),
        Rule::ReleaseUnread => format!(
            "slot {s} released for step {k} before this thread finished reading it (the last it finished there: {})",
            step_or_none(a)
        ),
        Rule::WgmmaInflight => format!(
            "slot {s} released after step {k} with {a} wgmma group(s) still reading it (no wgmma.wait_group retired them)"
        ),
        Rule::TailRead if d == PLAN_PAST => format!(
            "a copy of step {k} reads {}[{b}][{c}], past the edge of the {e} x {f} tensor: it must zero-fill and read nothing",
            tensor(a)
        ),
        Rule::TailRead if d == PLAN_SKIPPED => format!(
            "a copy of step {k} zero-fills {}[{b}][{c}], inside the {e} x {f} tensor: it must read it",
            tensor(a)
        ),
        Rule::TailRead => format!(
            "a copy of step {k} reads another address or byte count than its plan's, {}[{b}][{c}] of the {e} x {f} tensor",
            tensor(a)
        ),
        Rule::IssuePastEnd => format!(
            "step {k} issued into slot {s}, past the block's last step {}",
            a - 1
        ),
        Rule::Drain => format!(
            "the walk ended with {a} of the {b} steps due {}",
            if c == 1 { "issued" } else { "read" }
        ),
        Rule::ReleasePartial => format!(
            "slot {s} released after step {k} to {a} of the {b} CTAs of its cluster, each of whose producers multicasts into it"
        ),
        Rule::StoreUnfenced => format!(
            "a TMA store of the staged box at column {c}, row {d} read shared memory that {a} of its {b} writers had not fenced to the async proxy (fence.proxy.async) before its barrier"
        ),
        Rule::TurnUnwaited => format!(
            "a consumer warpgroup read turn {a} from step {k} with no wait for it (the turn it last waited for: {})",
            if b < 0 {
                "none".to_string()
            } else {
                b.to_string()
            }
        ),
    }
}
