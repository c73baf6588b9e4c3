//! The movement mechanisms as data: what each needs (minimum architecture), what it claims the
//! SASS will show, how its completion protocol reads in the report, the controls that break one
//! protocol step on purpose, and the control block every pipeline kernel shares. The loops
//! themselves are `kernels/pipeline/<mechanism>.cuh`, one per mechanism, shared by every workload.

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

/// The pipeline's control block inside every workload's kernel parameters (`struct Ctl` in
/// kernels/common/hooks.cuh): timeline buffer, status word, wait bound, stress seed.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Pod, Zeroable)]
pub struct Ctl {
    pub trace: u64,
    pub status: u64,
    pub timeout_ns: u64,
    pub seed: u32,
    pub trace_blocks: u32,
}
const _: () = assert!(std::mem::size_of::<Ctl>() == 32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    Sync,
    Regprefetch,
    Cpasync,
    MemcpyAsyncPipeline,
    MemcpyAsyncBarrier,
    Bulk,
    Tma,
    /// No staging: the compute body loads its tile straight from global memory into registers.
    Direct,
}

impl Mechanism {
    /// The value of MECH in kernels/pipeline/pipeline.cuh.
    pub fn kernel_code(self) -> u32 {
        match self {
            Mechanism::Sync => 0,
            Mechanism::Regprefetch => 1,
            Mechanism::Cpasync => 2,
            Mechanism::MemcpyAsyncPipeline => 3,
            Mechanism::MemcpyAsyncBarrier => 4,
            Mechanism::Bulk => 5,
            Mechanism::Tma => 6,
            Mechanism::Direct => 7,
        }
    }

    /// Lowest compute capability (as 10 x major + minor) the mechanism exists on.
    pub fn min_sm(self) -> u32 {
        match self {
            Mechanism::Sync | Mechanism::Regprefetch | Mechanism::Direct => 70,
            Mechanism::Cpasync | Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => {
                80
            }
            Mechanism::Bulk | Mechanism::Tma => 90,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Sync => "sync",
            Mechanism::Regprefetch => "regprefetch",
            Mechanism::Cpasync => "cpasync",
            Mechanism::MemcpyAsyncPipeline => "memcpy_async+pipeline",
            Mechanism::MemcpyAsyncBarrier => "memcpy_async+barrier",
            Mechanism::Bulk => "bulk",
            Mechanism::Tma => "tma",
            Mechanism::Direct => "direct",
        }
    }

    /// A pipelined mechanism by the name a sweep's mechanism axis and the variants' names give it,
    /// and whether a producer warp feeds it (`tma-ws`).
    pub fn pipelined(name: &str) -> Option<(Mechanism, bool)> {
        Some(match name {
            "cpasync" => (Mechanism::Cpasync, false),
            "mca-pipeline" => (Mechanism::MemcpyAsyncPipeline, false),
            "mca-barrier" => (Mechanism::MemcpyAsyncBarrier, false),
            "bulk" => (Mechanism::Bulk, false),
            "tma" => (Mechanism::Tma, false),
            "tma-ws" => (Mechanism::Tma, true),
            _ => return None,
        })
    }

    pub fn uses_mbarrier_ring(self) -> bool {
        matches!(self, Mechanism::Bulk | Mechanism::Tma)
    }

    /// What the SASS must show of a pipeline of this mechanism copying `copy_bytes` per
    /// instruction (L1-bypassing where `bypass`).
    pub fn claim(self, copy_bytes: u32, bypass: bool) -> Claim {
        match self {
            Mechanism::Sync | Mechanism::Regprefetch => Claim::Synchronous,
            Mechanism::Cpasync => Claim::Ldgsts {
                bytes: copy_bytes,
                bypass,
            },
            Mechanism::MemcpyAsyncPipeline | Mechanism::MemcpyAsyncBarrier => Claim::AnyAsync,
            Mechanism::Bulk => Claim::BulkCopy,
            Mechanism::Tma => Claim::TensorCopy,
            Mechanism::Direct => Claim::Direct,
        }
    }
}

/// How a cuda::memcpy_async call is spelled: the size and element type decide the lowering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McaForm {
    /// cuda::aligned_size_t<16> on the element pointer.
    Aligned16,
    /// A plain size_t: only the element type's alignment is known.
    ElementAligned,
    /// aligned_size_t<16> on a type with a user-defined copy assignment.
    NotTriviallyCopyable,
}

impl McaForm {
    pub fn code(self) -> u32 {
        match self {
            McaForm::Aligned16 => 0,
            McaForm::ElementAligned => 1,
            McaForm::NotTriviallyCopyable => 2,
        }
    }
}

/// One protocol step broken on purpose. Controls must fail validation on every run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    SkipWait,
    EarlyRelease,
    Overfill,
    CommitAfterWait,
    WrongParity,
    NoExpectTx,
    /// Host side: the tensor map's row stride is 16 bytes short of the view's.
    WrongStride,
    /// cp.async: no empty group is committed past the last tile, so while the pipeline drains
    /// wait_group<S-2> lets the last tiles through unwaited.
    DrainNoCommit,
    /// cp.async: no bar.sync between the wait and the refill, so a slot is refilled while other
    /// warps still read it and a step is read before other threads' copies of it landed.
    NoBarrier,
    /// cp.async: wait_group one higher than the protocol's, so the step read may still be in flight.
    WaitShort,
    /// mbarrier: expect_tx announces 16 bytes fewer than the copies bring.
    TxShort,
    /// mbarrier: expect_tx announces 16 bytes more than the copies bring (the phase never completes).
    TxLong,
    /// Host side: A's tensor map box is half the tile's rows, so the step brings fewer bytes
    /// than the kernel announces.
    WrongBox,
    /// Cluster: a consumer releases its own CTA's slot only, not the other CTA's, whose producer
    /// multicasts into the slot too.
    ReleaseLocal,
    /// TMA store: the staged tile is stored with no fence.proxy.async after the threads' writes.
    StoreUnfenced,
    /// Attention: O is not rescaled when a row's running maximum moves (a numerical control).
    NoRescale,
    /// Attention: the causal mask shows each query one key more than it may see (a numerical
    /// control).
    MaskShifted,
    /// Row windows: a row that starts inside a 16-byte chunk is read one element late in its slot
    /// (a numerical control).
    WindowShift,
    /// Row windows: TMA lands each row's window from its aligned chunk, but the row is read from
    /// the window's start, its offset in the chunk not applied (a numerical control).
    WindowUnshifted,
    /// Turns: a consumer warpgroup reads its turn's steps without waiting for the other's turn
    /// to end (the sums are the same: the protocol monitor catches it).
    TurnSkipped,
}

impl Control {
    /// The value of CONTROL in the kernel (0 for controls that break the host side only).
    pub fn code(self) -> u32 {
        match self {
            Control::SkipWait => 1,
            Control::EarlyRelease => 2,
            Control::Overfill => 3,
            Control::CommitAfterWait => 4,
            Control::WrongParity => 5,
            Control::NoExpectTx => 6,
            Control::WrongStride => 0,
            Control::DrainNoCommit => 7,
            Control::NoBarrier => 8,
            Control::WaitShort => 9,
            Control::TxShort => 10,
            Control::TxLong => 11,
            Control::WrongBox => 0,
            Control::ReleaseLocal => 12,
            Control::StoreUnfenced => 13,
            Control::NoRescale => 14,
            Control::MaskShifted => 15,
            Control::WindowShift => 16,
            Control::WindowUnshifted => 17,
            Control::TurnSkipped => 18,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Control::SkipWait => "consumer reads the slot without waiting for its copy",
            Control::EarlyRelease => "slot released before every reader finished",
            Control::Overfill => {
                "producer refills the slot being read (one tile more in flight than slots)"
            }
            Control::CommitAfterWait => {
                "cp.async commit placed after the wait (the wait covers nothing)"
            }
            Control::WrongParity => "consumer waits on the other mbarrier phase parity",
            Control::NoExpectTx => {
                "producer arrives without expect_tx (phase completes before the bytes land)"
            }
            Control::WrongStride => "tensor map row stride 16 bytes short of the view's",
            Control::DrainNoCommit => {
                "no empty cp.async group past the last tile (the draining wait covers too few)"
            }
            Control::NoBarrier => "no bar.sync between the cp.async wait and the slot's refill",
            Control::WaitShort => "cp.async wait_group one too high (waits on too few groups)",
            Control::TxShort => "expect_tx 16 bytes short of the step's boxes",
            Control::TxLong => {
                "expect_tx 16 bytes beyond the step's boxes (the phase never completes)"
            }
            Control::WrongBox => "A's tensor map box is half the tile's rows",
            Control::ReleaseLocal => {
                "consumer releases its own CTA's slot, not the cluster partner's that multicasts into it"
            }
            Control::StoreUnfenced => {
                "TMA store of a staged tile with no fence.proxy.async after the threads' writes"
            }
            Control::NoRescale => "O not rescaled when a row's running maximum moves",
            Control::MaskShifted => "causal mask one key late: each query sees the key after it",
            Control::WindowShift => {
                "a row that starts inside a 16-byte chunk read one element late in its window"
            }
            Control::WindowUnshifted => {
                "a row that starts inside a 16-byte chunk read from its TMA window's start, its offset not applied"
            }
            Control::TurnSkipped => {
                "a consumer warpgroup starts its turn's MMAs without waiting for the other's turn to end"
            }
        }
    }
}

/// What the SASS must show for the variant's claim to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Claim {
    /// No asynchronous copy at all; the data goes through registers (LDG then STS).
    Synchronous,
    /// cp.async of `bytes` per instruction (LDGSTS), L1-bypassing when `bypass`.
    Ldgsts { bytes: u32, bypass: bool },
    /// cp.async.bulk (UBLKCP).
    BulkCopy,
    /// cp.async.bulk.tensor (UTMALDG).
    TensorCopy,
    /// A high-level API (cuda::memcpy_async): any asynchronous copy; which one is reported as found.
    AnyAsync,
    /// No staging: 16-byte global loads (LDG) and none through a generic pointer (LD), no
    /// asynchronous copy and no 16-byte shared store (STS.128, a tile's; the compute body's own
    /// 4-byte reduction partials may remain).
    Direct,
}
