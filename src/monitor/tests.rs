use super::*;

const DEVICE: &str = include_str!("../../kernels/common/monitor.cuh");

/// The value of `#define NAME value` in monitor.cuh.
fn define(name: &str) -> u32 {
    let line = DEVICE
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name) && l.starts_with("#define"))
        .unwrap_or_else(|| panic!("monitor.cuh defines no {name}"));
    let v = line
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_end_matches('U');
    match v.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).unwrap(),
        None => v.parse().unwrap(),
    }
}

/// The field names of a device struct, in order (arrays with their extent: "per_rule[MON_RULES]").
fn fields(name: &str) -> Vec<String> {
    let start = DEVICE.find(&format!("struct {name} {{")).unwrap();
    let body = &DEVICE[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find("};").unwrap()];
    body.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<String>()
        .split(';')
        .filter(|d| !d.trim().is_empty())
        .flat_map(|d| {
            let d = d.trim();
            let names = &d[d.find(' ').unwrap()..];
            names
                .split(',')
                .map(|n| n.trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

const DEVICE_NAMES: [(Rule, &str); 20] = [
    (Rule::RefillEarly, "MON_REFILL_EARLY"),
    (Rule::RefillUnacquired, "MON_REFILL_UNACQUIRED"),
    (Rule::ReadUnwaited, "MON_READ_UNWAITED"),
    (Rule::ReadIncomplete, "MON_READ_INCOMPLETE"),
    (Rule::ReadUnpublished, "MON_READ_UNPUBLISHED"),
    (Rule::SlotHoldsOther, "MON_SLOT_HOLDS_OTHER"),
    (Rule::WaitParity, "MON_WAIT_PARITY"),
    (Rule::TxMismatch, "MON_TX_MISMATCH"),
    (Rule::InitMissing, "MON_INIT_MISSING"),
    (Rule::InitUnsynced, "MON_INIT_UNSYNCED"),
    (Rule::InitCount, "MON_INIT_COUNT"),
    (Rule::FenceMissing, "MON_FENCE_MISSING"),
    (Rule::ReleaseUnread, "MON_RELEASE_UNREAD"),
    (Rule::WgmmaInflight, "MON_WGMMA_INFLIGHT"),
    (Rule::TailRead, "MON_TAIL_READ"),
    (Rule::IssuePastEnd, "MON_ISSUE_PAST_END"),
    (Rule::Drain, "MON_DRAIN"),
    (Rule::ReleasePartial, "MON_RELEASE_PARTIAL"),
    (Rule::StoreUnfenced, "MON_STORE_UNFENCED"),
    (Rule::TurnUnwaited, "MON_TURN_UNWAITED"),
];

#[test]
fn the_device_layout_is_mirrored() {
    assert_eq!(define("MON_STATUS_WORDS") as usize, STATUS_WORDS);
    assert_eq!(define("MON_MAGIC"), MAGIC);
    assert_eq!(define("MON_VERSION"), VERSION);
    assert_eq!(define("MON_RECORDS") as usize, RECORDS);
    assert_eq!(define("MON_RULES") as usize, RULE_SLOTS);
    assert_eq!(define("MON_PLAN_ELSEWHERE"), 0);
    assert_eq!(define("MON_PLAN_PAST") as i32, rule::PLAN_PAST);
    assert_eq!(define("MON_PLAN_SKIPPED") as i32, rule::PLAN_SKIPPED);
    let record = fields("MonRecord");
    let want = [
        "rule", "block", "thread", "slot", "step", "phase", "a", "b", "c", "d", "e", "f",
    ];
    assert_eq!(record, want);
    // word i of a device record holds field i: read back by name on the host
    let words: Vec<u32> = (0..want.len() as u32).map(|i| 100 + i).collect();
    let r: RawRecord = bytemuck::pod_read_unaligned(bytemuck::cast_slice(&words));
    let host = [
        r.rule,
        r.block,
        r.thread,
        r.slot as u32,
        r.step as u32,
        r.phase,
        r.a as u32,
        r.b as u32,
        r.c as u32,
        r.d as u32,
        r.e as u32,
        r.f as u32,
    ];
    assert_eq!(host.to_vec(), words);
    assert_eq!(
        fields("MonLog"),
        [
            "magic",
            "version",
            "capacity",
            "stored",
            "blocks",
            "reads",
            "mech",
            "stages",
            "consumers",
            "threads",
            "trail",
            "per_rule[MON_RULES]",
            "rec[MON_RECORDS]"
        ]
    );
    let mut log = RawLog::zeroed();
    log.threads = 7;
    log.per_rule[3] = 9;
    let words: &[u32] = bytemuck::cast_slice(std::slice::from_ref(&log));
    assert_eq!((words[9], words[12 + 3]), (7, 9));
}

#[test]
fn rule_codes_are_the_devices() {
    for (rule, name) in DEVICE_NAMES {
        assert_eq!(rule.code(), define(name), "{name}");
        assert_eq!(Rule::from_code(rule.code()), Some(rule));
    }
    assert_eq!(DEVICE_NAMES.len(), Rule::ALL.len());
    assert!((Rule::ALL.len() as u32) < define("MON_RULES"));
    assert_eq!(Rule::from_code(0), None);
    assert_eq!(Rule::from_code(21), None);
}

const TMA_S2: Build = Build {
    mech: 6,
    stages: 2,
    consumers: 128,
    threads: 128,
};

fn record(rule: Rule, slot: i32, step: i32, counts: [i32; 6]) -> RawRecord {
    RawRecord {
        rule: rule.code(),
        block: 3,
        thread: 37,
        slot,
        step,
        phase: (step as u32 / 2) & 1,
        a: counts[0],
        b: counts[1],
        c: counts[2],
        d: counts[3],
        e: counts[4],
        f: counts[5],
    }
}

/// A status buffer as a monitor launch of `build` leaves it.
fn buffer(build: Build, records: &[RawRecord], per_rule: &[(Rule, u32)], blocks: u32) -> Vec<u8> {
    let mut log = RawLog::zeroed();
    log.magic = MAGIC;
    log.version = VERSION;
    log.capacity = RECORDS as u32;
    log.stored = records.len() as u32;
    log.blocks = blocks;
    log.reads = blocks * 16 * build.consumers;
    (log.mech, log.stages, log.consumers, log.threads) =
        (build.mech, build.stages, build.consumers, build.threads);
    for &(rule, n) in per_rule {
        log.per_rule[rule.code() as usize] = n;
    }
    log.records[..records.len()].copy_from_slice(records);
    let mut out = vec![0u8; STATUS_WORDS * 4];
    out.extend_from_slice(bytemuck::bytes_of(&log));
    out
}

#[test]
fn a_clean_log_decodes_and_must_cover_its_launch() {
    let log = decode(&buffer(TMA_S2, &[], &[], 4)).unwrap();
    assert!(log.is_clean());
    assert_eq!(log.total(), 0);
    assert_eq!(log.build, TMA_S2);
    log.covers(4, 4 * 16 * 128).unwrap();
    let short = log.covers(5, 4 * 16 * 128).unwrap_err().to_string();
    assert!(
        short.contains("4 of 5 blocks") && short.contains("8192 of 8192 reads"),
        "{short}"
    );
    let unread = log.covers(4, 9000).unwrap_err().to_string();
    assert!(unread.contains("8192 of 9000 reads"), "{unread}");
    assert_eq!(
        log.to_string(),
        "monitor (tma, 2 stages, 128 consumer threads): no violation in 4 blocks, 8192 reads checked"
    );
}

#[test]
fn a_buffer_without_a_monitor_log_is_refused() {
    let zeros = vec![0u8; STATUS_BYTES];
    let e = decode(&zeros).unwrap_err().to_string();
    assert!(e.contains("did not run a monitor build"), "{e}");
    let e = decode(&zeros[..32]).unwrap_err().to_string();
    assert!(
        e.contains("32 bytes") && e.contains(&STATUS_BYTES.to_string()),
        "{e}"
    );
    let mut other = buffer(TMA_S2, &[], &[], 1);
    other[STATUS_WORDS * 4] ^= 1;
    assert!(decode(&other).unwrap_err().to_string().contains("magic"));
    let mut old = buffer(TMA_S2, &[], &[], 1);
    old[STATUS_WORDS * 4 + 4] = 9;
    let e = decode(&old).unwrap_err().to_string();
    assert!(e.contains("version 9"), "{e}");
}

#[test]
fn a_violation_names_its_rule_and_numbers() {
    let recs = [
        record(Rule::RefillEarly, 1, 7, [32, 128, 0, 0, 0, 0]),
        RawRecord {
            phase: 1,
            ..record(Rule::WaitParity, 0, 4, [0, 0, 0, 0, 0, 0])
        },
    ];
    let log = decode(&buffer(
        TMA_S2,
        &recs,
        &[(Rule::RefillEarly, 5), (Rule::WaitParity, 2)],
        4,
    ))
    .unwrap();
    assert!(!log.is_clean());
    assert_eq!(log.total(), 7);
    assert_eq!(
        log.violations[0].to_string(),
        "refill-before-release: slot 1 refilled for step 7 while 96 of 128 readers of step 5 had not released it (block 3, warp 1, thread 37)"
    );
    assert_eq!(
        log.violations[1].to_string(),
        "wait-parity: full[0] waited on phase parity 1 for step 4, whose phase has parity 0 (block 3, warp 1, thread 37)"
    );
    let shown = log.to_string();
    assert!(
        shown.starts_with("monitor (tma, 2 stages, 128 consumer threads): 7 violations (refill-before-release x5, wait-parity x2) in 4 blocks"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 3, "{shown}");
}

#[test]
fn every_rule_says_what_it_saw() {
    const CPASYNC: u32 = 2;
    const PIPELINE: u32 = 3;
    const TMA: u32 = 6;
    let cases: [(Rule, u32, [i32; 6], &str); 16] = [
        (
            Rule::ReadIncomplete,
            CPASYNC,
            [7, 7, 1, 0, 0, 0],
            "step 7 read from slot 1, its copies in cp.async group 7, after wait_group 1 with 7 committed, which waits for groups 0..5 only",
        ),
        (
            Rule::ReadIncomplete,
            CPASYNC,
            [0, 0, 0, 0, 0, 0],
            "after wait_group 0 with 0 committed, which waits for no group",
        ),
        (
            Rule::ReadIncomplete,
            CPASYNC,
            [0, 1, -1, 0, 0, 0],
            "before any wait_group (1 committed)",
        ),
        (
            Rule::RefillUnacquired,
            CPASYNC,
            [4, 6, 6, 0, 0, 0],
            "slot 1 refilled for step 7 before this thread finished reading step 5 (the last it finished there: step 4)",
        ),
        (
            Rule::RefillUnacquired,
            CPASYNC,
            [5, 6, 6, 0, 0, 0],
            "slot 1 refilled for step 7 with no block barrier since this thread read step 5 (barrier 6 then and now)",
        ),
        (
            Rule::RefillUnacquired,
            PIPELINE,
            [7, 7, 0, 0, 0, 0],
            "copies of step 7 into slot 1 issued with no producer_acquire outstanding (7 acquired, 7 committed)",
        ),
        (
            Rule::RefillUnacquired,
            TMA,
            [3, 0, 0, 0, 0, 0],
            "no wait on empty[1] for the release of step 5 (the producer's last wait there: step 3)",
        ),
        (
            Rule::ReadUnpublished,
            CPASYNC,
            [5, 5, 0, 0, 0, 0],
            "with no block barrier since its completion (barrier 5 then, 5 at the read)",
        ),
        (
            Rule::SlotHoldsOther,
            CPASYNC,
            [5, 0, 0, 0, 0, 0],
            "step 7 read from slot 1, which holds step 5",
        ),
        (
            Rule::SlotHoldsOther,
            TMA,
            [9, 1, 0, 0, 0, 0],
            "slot 1 refilled for step 9 while this thread read step 7",
        ),
        (
            Rule::TailRead,
            CPASYNC,
            [1, 6, 1000, 1, 257, 1000],
            "a copy of step 7 reads A[6][1000], past the edge of the 257 x 1000 tensor: it must zero-fill and read nothing",
        ),
        (
            Rule::TailRead,
            CPASYNC,
            [2, 8, 64, 2, 392, 1000],
            "a copy of step 7 zero-fills B[8][64], inside the 392 x 1000 tensor: it must read it",
        ),
        (
            Rule::TailRead,
            TMA,
            [0, 3, 0, 0, 4096, 4096],
            "a copy of step 7 reads another address or byte count than its plan's, X[3][0] of the 4096 x 4096 tensor",
        ),
        (
            Rule::Drain,
            CPASYNC,
            [5, 6, 1, 0, 0, 0],
            "the walk ended with 5 of the 6 steps due issued",
        ),
        (
            Rule::TurnUnwaited,
            TMA,
            [3, 1, 0, 0, 0, 0],
            "a consumer warpgroup read turn 3 from step 7 with no wait for it (the turn it last waited for: 1)",
        ),
        (
            Rule::InitCount,
            TMA,
            [1, 7, 8, 0, 0, 0],
            "empty[1] initialised for 7 arrivals a phase; its protocol has 8",
        ),
    ];
    for (rule, mech, counts, want) in cases {
        let v = Violation {
            rule,
            block: 0,
            thread: 0,
            slot: 1,
            step: 7,
            phase: 1,
            counts,
            build: Build { mech, ..TMA_S2 },
        };
        let shown = v.to_string();
        assert!(shown.starts_with(&format!("{}: ", rule.name())), "{shown}");
        assert!(shown.contains(want), "{shown}");
    }
    // every rule renders its step, whatever the mechanism
    for rule in Rule::ALL {
        for mech in 0..8 {
            let v = Violation {
                rule,
                block: 1,
                thread: 64,
                slot: 0,
                step: 3,
                phase: 1,
                counts: [2, 3, 4, 0, 8, 9],
                build: Build { mech, ..TMA_S2 },
            };
            let shown = v.to_string();
            assert!(shown.ends_with("(block 1, warp 2, thread 64)"), "{shown}");
            assert!(shown.contains(" 3"), "{shown}");
        }
    }
}

#[test]
fn records_past_the_room_are_counted_not_lost() {
    let recs: Vec<RawRecord> = (0..RECORDS as i32)
        .map(|k| record(Rule::ReadUnwaited, 0, k, [-1, 0, 0, 0, 0, 0]))
        .collect();
    let mut buf = buffer(TMA_S2, &recs, &[(Rule::ReadUnwaited, 500)], 132);
    // stored counts every claim, written or not
    buf[STATUS_WORDS * 4 + 12..STATUS_WORDS * 4 + 16].copy_from_slice(&70u32.to_le_bytes());
    let log = decode(&buf).unwrap();
    assert_eq!((log.violations.len(), log.unstored), (RECORDS, 6));
    assert!(log.to_string().ends_with("(6 more records did not fit)"));
    assert!(log.violations[0].to_string().contains(
        "with no wait for its completion (the last completion this thread saw there: none)"
    ));
}

#[test]
fn a_log_that_disagrees_with_itself_is_refused() {
    let unknown = RawRecord {
        rule: 21,
        ..record(Rule::Drain, 0, 0, [0; 6])
    };
    let e = decode(&buffer(TMA_S2, &[unknown], &[(Rule::Drain, 1)], 1)).unwrap_err();
    assert!(e.to_string().contains("unknown rule code 21"), "{e}");
    let uncounted = record(Rule::Drain, 0, 0, [0; 6]);
    let e = decode(&buffer(TMA_S2, &[uncounted], &[], 1)).unwrap_err();
    assert!(e.to_string().contains("a record of drain"), "{e}");
    let mut bad_count = buffer(TMA_S2, &[], &[], 1);
    let at = STATUS_WORDS * 4 + 48 + 4 * 21;
    bad_count[at..at + 4].copy_from_slice(&1u32.to_le_bytes());
    let e = decode(&bad_count).unwrap_err();
    assert!(e.to_string().contains("unknown rule code 21"), "{e}");
}

#[test]
fn the_trail_is_mirrored_and_keeps_each_whole_first_record() {
    assert_eq!(
        fields("MonTrail"),
        [
            "magic",
            "mech",
            "stages",
            "consumers",
            "threads",
            "reserved[3]",
            "first[MON_RULES]"
        ]
    );
    let mut t = RawTrail::zeroed();
    let bytes = |t: &RawTrail| bytemuck::bytes_of(t).to_vec();
    // no monitor block started: nothing, whatever the records hold
    t.first[Rule::TxMismatch.code() as usize] =
        record(Rule::TxMismatch, 0, 3, [96, 112, 0, 0, 0, 0]);
    assert!(decode_trail(&bytes(&t)).is_empty());
    (t.magic, t.mech, t.stages, t.consumers, t.threads) = (MAGIC, 6, 2, 128, 128);
    let tx = decode_trail(&bytes(&t));
    assert_eq!(tx.len(), 1);
    assert_eq!(
        (tx[0].rule, tx[0].step, tx[0].build),
        (Rule::TxMismatch, 3, TMA_S2)
    );
    assert!(tx[0].to_string().starts_with("tx-bytes: "), "{}", tx[0]);
    // a record whose rule word was not yet written, or sits at another rule's index, is not whole
    t.first[Rule::InitCount.code() as usize] = RawRecord {
        rule: 0,
        ..record(Rule::InitCount, 0, -1, [1, 3, 4, 0, 0, 0])
    };
    t.first[Rule::Drain.code() as usize] = record(Rule::WaitParity, 0, 1, [0; 6]);
    assert_eq!(decode_trail(&bytes(&t)), tx);
    assert!(decode_trail(&bytes(&t)[..TRAIL_BYTES - 1]).is_empty());
}
