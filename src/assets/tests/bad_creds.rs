//! Bad creds secrets: each refusal names the file and the key, and never echoes a secret.

use super::*;

#[test]
fn creds_secret_with_non_base64_data_is_rejected_without_echoing_it() {
    let err = refused(
        "aws",
        CREDS_SECRET,
        "aws_secret_access_key: Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRy13SmFsclhVdG5GRU1J",
        "aws_secret_access_key: fixture-secret-DO-NOT-LOG!!",
        "data.aws_secret_access_key",
        "expected base64",
    );
    assert!(!err.to_string().contains(SECRET), "{err}");
}

#[test]
fn creds_secret_without_a_key_names_the_key() {
    refused(
        "aws",
        CREDS_SECRET,
        "  aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=\n",
        "",
        "data.aws_access_key_id",
        "missing",
    );
}

#[test]
fn every_missing_creds_key_is_named() {
    let dir = copy_fixture("aws");
    let path = dir.path().join(CREDS_SECRET);
    let text = std::fs::read_to_string(&path).unwrap();
    let head = text.split("\ndata:").next().unwrap().to_string();
    std::fs::write(&path, format!("{head}\ndata: {{}}\n")).unwrap();
    let fields: Vec<String> = load_all(dir.path())
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(
        fields,
        ["data.aws_access_key_id", "data.aws_secret_access_key"]
    );
}
