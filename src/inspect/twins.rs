//! Cubins of one library that hold the same code built for two architectures: sgl-kernel ships
//! an sm_90 and an sm_90a build of each source (and some sm_80 and sm_89 ones) whose bytes differ
//! only in the ELF header's flags, which name the architecture, wherever the source used nothing
//! the suffixed architecture adds. One listing and one analysis of the code serve them all.

use std::collections::BTreeMap;
use std::path::Path;

/// Where an ELF64 header keeps `e_flags`, the word CUDA names the architecture in.
const FLAGS: std::ops::Range<usize> = 48..52;

/// The file's bytes with the architecture flags blanked, when it is an ELF64 file.
fn code(path: &Path) -> Option<Vec<u8>> {
    let mut data = std::fs::read(path).ok()?;
    if data.len() < FLAGS.end || !data.starts_with(b"\x7fELF") || data[4] != 2 {
        return None;
    }
    data[FLAGS].fill(0);
    Some(data)
}

/// The files as groups of indices, in the order given, each group's first member first: files
/// in one group are the same bytes but for the architecture flags. Only files of one size are
/// read and compared; a file that cannot be read is a group of its own.
pub fn groups(paths: &[&Path]) -> Vec<Vec<usize>> {
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    let mut by_size: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (i, p) in paths.iter().enumerate() {
        if let Some(n) = size(p) {
            by_size.entry(n).or_default().push(i);
        }
    }
    // the group each file joins: itself, or the first earlier file of the same code
    let mut leader: Vec<usize> = (0..paths.len()).collect();
    for same in by_size.values().filter(|v| v.len() > 1) {
        let mut seen: Vec<(usize, Vec<u8>)> = Vec::new();
        for &i in same {
            let Some(bytes) = code(paths[i]) else {
                continue;
            };
            match seen.iter().find(|(_, b)| *b == bytes) {
                Some(&(first, _)) => leader[i] = first,
                None => seen.push((i, bytes)),
            }
        }
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut slot: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, &l) in leader.iter().enumerate() {
        match slot.get(&l) {
            Some(&g) => out[g].push(i),
            None => {
                slot.insert(l, out.len());
                out.push(vec![i]);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_that_differ_only_in_the_architecture_flags_are_one_group() {
        let dir = tempfile::tempdir().unwrap();
        let mut elf = b"\x7fELF\x02\x01\x01".to_vec();
        elf.resize(128, 7);
        let with = |flags: u8, tail: u8| {
            let mut b = elf.clone();
            b[50] = flags;
            b[127] = tail;
            b
        };
        let files = [
            ("a.sm_90.cubin", with(0x05, 0)),
            ("b.sm_80.cubin", with(0x01, 1)),
            ("a.sm_90a.cubin", with(0x0d, 0)),
            // the same size and flags as a.sm_90's twin, another byte of code
            ("c.sm_90a.cubin", with(0x0d, 2)),
            ("notes.txt", vec![0; 128]),
            ("other.txt", vec![0; 128]),
        ];
        let paths: Vec<std::path::PathBuf> = files
            .iter()
            .map(|(n, b)| {
                let p = dir.path().join(n);
                std::fs::write(&p, b).unwrap();
                p
            })
            .collect();
        let refs: Vec<&Path> = paths.iter().map(|p| p.as_path()).collect();
        assert_eq!(
            groups(&refs),
            [vec![0, 2], vec![1], vec![3], vec![4], vec![5]]
        );
    }
}
