//! What a build adds to a pipeline to check or watch it (`kernels/common/hooks.cuh`): random
//! sleeps at its protocol edges, the protocol monitor (`kernels/common/monitor.cuh`), a timeline
//! record of sampled blocks, one stage alone. A clean build has none of them, and only a clean
//! build is timed as the variant.

use serde::{Deserialize, Serialize};

/// Random sleeps in both producer and consumer (bits 1 and 2 of STRESS).
pub const STRESS_BOTH: u32 = 3;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Instrument {
    /// Bit 1: random sleeps in the producer, bit 2: in the consumer.
    pub stress: u32,
    /// Steps per sampled block that record a timeline (0: none).
    pub trace_tiles: u32,
    /// 0: the whole pipeline; 1: the copy stage alone; 2: the compute stage alone (model probes).
    pub only: u32,
    /// The protocol monitor checks every edge (`crate::monitor`); its launches need a status
    /// buffer of `monitor::STATUS_BYTES`.
    pub monitor: bool,
}

impl Instrument {
    /// The build that is timed as the variant: nothing added.
    pub const CLEAN: Instrument = Instrument {
        stress: 0,
        trace_tiles: 0,
        only: 0,
        monitor: false,
    };

    /// The checking build: random sleeps in producer and consumer open the windows a race needs,
    /// and the monitor finds a broken protocol rule whether or not the data shows it.
    pub const STRESSED: Instrument = Instrument {
        stress: STRESS_BOTH,
        trace_tiles: 0,
        only: 0,
        monitor: true,
    };

    /// A build that records `tiles` steps of each sampled block.
    pub fn traced(tiles: u32) -> Instrument {
        Instrument {
            trace_tiles: tiles,
            ..Instrument::CLEAN
        }
    }

    pub fn is_clean(&self) -> bool {
        *self == Instrument::CLEAN
    }
}
