//! Bad creds secrets: each refusal names the file and the key, and never echoes a secret.

use super::*;

#[test]
fn bad_creds_secrets_are_refused_naming_the_key_without_echoing_it() {
    assert_refusals(&[
        Refusal {
            case: "data that is not base64",
            fixture: "aws",
            file: CREDS_SECRET,
            from: "aws_secret_access_key: Zml4dHVyZS1zZWNyZXQtRE8tTk9ULUxPRy13SmFsclhVdG5GRU1J",
            to: "aws_secret_access_key: fixture-secret-DO-NOT-LOG!!",
            field: "data.aws_secret_access_key",
            problem_has: &["expected base64"],
        },
        Refusal {
            case: "a key missing",
            fixture: "aws",
            file: CREDS_SECRET,
            from: "  aws_access_key_id: QUtJQUZJWFRVUkVFWEFNUExFMDA=\n",
            to: "",
            field: "data.aws_access_key_id",
            problem_has: &["missing"],
        },
    ]);
}

#[test]
fn every_missing_creds_key_is_named() {
    let dir = rewritten("aws", CREDS_SECRET, |text| {
        let head = text.split("\ndata:").next().unwrap();
        format!("{head}\ndata: {{}}\n")
    });
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
