//! The host matrix in CI: every sample of `tests/host-matrix.ron` marked `ci` recompiles for every
//! host and prints exactly what its oracle prints, with no compiler warning; the README table lists
//! every sample. `scripts/host-matrix.sh` runs the whole matrix and rewrites the table.

use std::collections::BTreeSet;
use std::fs;

use rpt_tests::matrix::{self, HOSTS, Verdict};
use rpt_tests::{rpt, stderr_of};

#[test]
fn ci_samples_reproduce_their_oracles_on_every_host_side_by_side() {
    let samples = matrix::samples().expect("tests/host-matrix.ron parses");
    let dir = tempfile::tempdir().expect("tempdir");
    let gen_dir = dir.path().join("gen");
    let cache = dir.path().join("cache");
    let mut failures = Vec::new();
    for sample in samples.iter().filter(|s| s.ci) {
        let scratch = tempfile::tempdir().expect("scratch");
        let expected = matrix::run_oracle(sample, scratch.path()).unwrap_or_else(|e| panic!("{}: {e}", sample.recipe));
        assert!(
            !expected.stdout.is_empty(),
            "{}: the oracle printed nothing",
            sample.recipe
        );
        for host in HOSTS {
            if let Verdict::Fail(why) = matrix::run_on_host(sample, host, &expected, &gen_dir, &cache) {
                failures.push(format!("{} on {host}: {why}", sample.recipe));
            }
        }
        // One generation per host, side by side: `<digest16>-<host>`, each with its own binary.
        let stem = sample
            .recipe
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".ron"))
            .expect("a .ron recipe");
        let mut suffixes = BTreeSet::new();
        for entry in fs::read_dir(gen_dir.join(stem))
            .expect("the recipe's generations")
            .flatten()
            // Beside the generations lies the run-time tier's coverage file of a sample that ran code
            // discovery missed.
            .filter(|e| e.path().is_dir())
        {
            let name = entry.file_name().to_string_lossy().into_owned();
            let (digest, host) = name.split_at(16);
            assert!(digest.bytes().all(|b| b.is_ascii_hexdigit()), "{name}");
            assert!(entry.path().join("bin").join(stem).is_file(), "{name} has no binary");
            suffixes.insert(host.trim_start_matches('-').to_string());
        }
        let expected_hosts: BTreeSet<String> = HOSTS.iter().map(|h| h.to_string()).collect();
        assert_eq!(suffixes, expected_hosts, "{}", sample.recipe);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_guest_has_a_ci_sample_and_the_readme_lists_every_sample() {
    let samples = matrix::samples().expect("tests/host-matrix.ron parses");
    let mut guests = BTreeSet::new();
    let mut guests_in_ci = BTreeSet::new();
    for s in &samples {
        let guest = s.guest().expect("the sample's recipe parses");
        if s.ci {
            guests_in_ci.insert(guest.clone());
        }
        guests.insert(guest);
    }
    assert_eq!(
        guests, guests_in_ci,
        "every guest needs a `ci: true` sample in tests/host-matrix.ron"
    );

    let readme = fs::read_to_string(matrix::readme_path()).expect("README.md");
    let rows = matrix::parse_table(&readme).expect("README.md has the host-matrix table");
    let listed: Vec<&str> = rows.iter().map(|r| r.recipe.as_str()).collect();
    let expected: Vec<&str> = samples.iter().map(|s| s.recipe.as_str()).collect();
    assert_eq!(
        listed, expected,
        "the README table is out of date: run scripts/host-matrix.sh"
    );
    for (row, sample) in rows.iter().zip(&samples) {
        assert_eq!(row.cells.len(), HOSTS.len(), "{}", row.recipe);
        assert_eq!(row.guest, sample.guest().expect("parses"), "{}", row.recipe);
        // CI proves the ci samples on every host, so the table must not say otherwise.
        if sample.ci {
            assert!(row.cells.iter().all(|c| c == "pass"), "{}: {:?}", row.recipe, row.cells);
        }
    }
    // The table is exactly what the driver would write for these rows.
    assert!(
        readme.contains(&matrix::render_table(&rows)),
        "the table is not in the driver's format"
    );
}

#[test]
fn the_matrix_covers_every_host_rpt_lists() {
    let out = rpt(&["hosts"]);
    assert!(out.status.success(), "{}", stderr_of(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let listed: BTreeSet<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split(':').next())
        .collect();
    let matrix: BTreeSet<&str> = HOSTS.iter().copied().collect();
    assert_eq!(listed, matrix, "`rpt hosts` said:\n{text}");
}
