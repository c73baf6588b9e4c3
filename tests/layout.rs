//! The module picture in the README is the code's: the library's top-level modules, floor by floor,
//! each importing only from floors below it, recomputed here from `src/`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every top-level module of the library and the others it names (`crate::x`), tests left out.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let lib = fs::read_to_string("src/lib.rs").unwrap();
    let mods: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_string())
        .collect();
    let mut out = BTreeMap::new();
    for m in &mods {
        let mut deps = BTreeSet::new();
        let dir = Path::new("src").join(m);
        let files = if dir.is_dir() {
            rs_files(&dir)
        } else {
            vec![dir.with_extension("rs")]
        };
        for f in files {
            let text = fs::read_to_string(&f).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            for name in crate_paths(code) {
                if mods.contains(&name) && &name != m {
                    deps.insert(name);
                }
            }
        }
        out.insert(m.clone(), deps);
    }
    out
}

fn rs_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if p.is_dir() {
            v.extend(rs_files(&p));
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            v.push(p);
        }
    }
    v
}

/// The first segment after each `crate::`, including each member of `crate::{a, b::c}`.
fn crate_paths(code: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut v = Vec::new();
    for part in code.split("crate::").skip(1) {
        if let Some(group) = part.strip_prefix('{') {
            let group = &group[..group.find(';').unwrap_or(group.len())];
            let mut depth = 0;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && (c.is_alphanumeric() || c == '_') => {
                        v.push(ident(&group[i..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            v.push(ident(part));
        }
    }
    v
}

/// Floors from the top: a module's floor is one above the highest it imports.
fn floors(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    fn height(
        m: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<String, usize>,
        path: &mut Vec<String>,
    ) -> usize {
        if let Some(&h) = memo.get(m) {
            return h;
        }
        assert!(
            !path.iter().any(|p| p == m),
            "import cycle: {} -> {m}",
            path.join(" -> ")
        );
        path.push(m.to_string());
        let h = g[m]
            .iter()
            .map(|d| 1 + height(d, g, memo, path))
            .max()
            .unwrap_or(0);
        path.pop();
        memo.insert(m.to_string(), h);
        h
    }
    let mut memo = BTreeMap::new();
    for m in g.keys() {
        height(m, g, &mut memo, &mut Vec::new());
    }
    let top = memo.values().copied().max().unwrap_or(0);
    (0..=top)
        .rev()
        .map(|h| {
            memo.iter()
                .filter(|(_, v)| **v == h)
                .map(|(k, _)| k.clone())
                .collect()
        })
        .collect()
}

/// The fenced block after the README's `<!-- floors -->` marker.
fn readme_floors() -> Vec<Vec<String>> {
    let readme = fs::read_to_string("README.md").unwrap();
    let after = readme
        .split("<!-- floors -->")
        .nth(1)
        .expect("README has a <!-- floors --> block");
    let block = after
        .split("```")
        .nth(1)
        .expect("a fenced block after the marker");
    block
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mods = l.split('|').nth(1).unwrap_or(l);
            let mut v: Vec<String> = mods.split_whitespace().map(String::from).collect();
            v.sort();
            v
        })
        .collect()
}

#[test]
fn readme_picture_is_the_code() {
    let code = floors(&imports());
    let drawn = readme_floors();
    let want: Vec<String> = code
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{:>2} | {}", code.len() - i, f.join("  ")))
        .collect();
    assert_eq!(
        drawn,
        code,
        "README's floors differ from the code's; the code's are:\n{}",
        want.join("\n")
    );
}

#[test]
fn at_most_ten_floors_and_cli_on_top() {
    let g = imports();
    assert!(floors(&g).len() <= 10, "{} floors", floors(&g).len());
    assert!(
        g.values().all(|d| !d.contains("cli")),
        "the library imports the binary"
    );
}

#[test]
fn the_scan_sees_grouped_and_nested_paths() {
    let code = "use crate::{a, b::{c, d}, e::f};\nuse crate::g::h;\nlet x = crate::i::j();";
    assert_eq!(crate_paths(code), ["a", "b", "e", "g", "i"]);
    let mut g = BTreeMap::new();
    g.insert("x".to_string(), BTreeSet::from(["y".to_string()]));
    g.insert("y".to_string(), BTreeSet::new());
    assert_eq!(
        floors(&g),
        vec![vec!["x".to_string()], vec!["y".to_string()]]
    );
}
