//! The register hand-over of an mbarrier ring with a producer warpgroup
//! (kernels/pipeline/ring.cuh, `setmaxnreg`): the producer's warpgroup lowers its budget so that
//! the consumer warpgroups can raise theirs. Shared by every workload whose Hopper ring has one.

/// Registers per thread of a producer warpgroup and of each consumer warpgroup after the hand-over:
/// 128 x 40 + 256 x 232 = 64512 fit the SM's 64 K, and 168 a thread at launch (384 threads) holds them.
pub const REGS_PRODUCER: u32 = 40;
pub const REGS_CONSUMER: u32 = 232;
/// `setmaxnreg` works on whole warpgroups: the producer is one.
pub const PRODUCER_THREADS: u32 = 128;

/// The registers a block of `consumers` consumer threads hands between its warpgroups: it must
/// have been launched with at least as many.
pub fn registers(consumers: u32) -> u32 {
    PRODUCER_THREADS * REGS_PRODUCER + consumers * REGS_CONSUMER
}

/// The build's options for the hand-over.
pub fn defines() -> [String; 3] {
    [
        format!("-DPRODUCER_THREADS={PRODUCER_THREADS}"),
        format!("-DREGS_PRODUCER={REGS_PRODUCER}"),
        format!("-DREGS_CONSUMER={REGS_CONSUMER}"),
    ]
}

/// `setmaxnreg.inc` waits, unbounded, for registers the block was never given: a launch of
/// `threads` with `per_thread` registers each must hold the `need` the hand-over counts on.
pub fn check_loaded(per_thread: u32, threads: u32, need: u32) -> Result<(), String> {
    let have = per_thread * threads;
    match have < need {
        true => Err(format!(
            "launched with {per_thread} registers a thread, {have} for the block; the hand-over needs {need}"
        )),
        false => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_consumer_warpgroups_fit_the_sm_and_a_short_launch_is_refused() {
        let need = registers(256);
        assert_eq!(need, 64512);
        assert!(need <= 65536);
        assert!(check_loaded(168, 384, need).is_ok());
        let short = check_loaded(128, 384, need).unwrap_err();
        assert!(
            short.contains("128 registers a thread, 49152 for the block"),
            "{short}"
        );
        assert!(defines().contains(&"-DREGS_CONSUMER=232".to_string()));
    }
}
