//! Golden files of the unit tests: compared, or rewritten with `UPDATE_GOLDEN=1` (then
//! review the diff).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

/// `actual` must equal the file at `relative` (from the crate root).
pub fn assert_golden(relative: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 creates it)", path.display()));
    assert_eq!(
        actual,
        expected,
        "{} (UPDATE_GOLDEN=1 and review)",
        path.display()
    );
}
