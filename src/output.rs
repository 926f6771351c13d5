//! How every command prints its result, `--output text|json|yaml`, in one place: data goes to
//! stdout as pretty JSON or real YAML, and a closed pipe (`... --output json | head`) ends the
//! output quietly instead of panicking.

use anyhow::Result;
use serde::Serialize;
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Output {
    Text,
    Json,
    Yaml,
}

/// Prints `value` as JSON or YAML (`Output::Text` prints JSON too: callers handle text).
pub fn data<T: Serialize>(output: Output, value: &T) -> Result<()> {
    write_stdout(&data_text(output, value)?)
}

/// What [`data`] prints.
pub fn data_text<T: Serialize>(output: Output, value: &T) -> Result<String> {
    Ok(match output {
        Output::Yaml => serde_saphyr::to_string(value)?,
        Output::Json | Output::Text => serde_json::to_string_pretty(value)? + "\n",
    })
}

/// Writes to stdout; a reader that went away (EPIPE) is not an error of ours.
pub fn write_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn yaml_is_yaml_and_json_is_json() {
        let value = serde_json::json!({"phase": "complete", "ips": ["10.0.1.5"]});
        let yaml = serde_saphyr::to_string(&value).unwrap();
        assert!(yaml.contains("phase: complete"), "{yaml}");
        let back: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(back, value);
    }
}
