//! Route53's write permission, proven by a change that cannot apply: Route53 has no dry run.

use super::AwsPreflight;
use crate::Zone;
use crate::aws::classify;
use crate::preflight::{Check, Needs, is_denied};
use aws_sdk_ec2::error::ProvideErrorMetadata;

impl AwsPreflight {
    /// Route53 has no dry run. The proof of `route53:ChangeResourceRecordSets` is a change
    /// that cannot apply: a DELETE of a record set that does not exist (a name no one uses,
    /// `bootstrap-agent-preflight-<nonce>.<zone>`, A, TTL 60, 192.0.2.1 from TEST-NET-1).
    /// Route53 authorizes the request first (IAM answers AccessDenied) and only then checks
    /// the batch, refusing it whole with InvalidChangeBatch ("it was not found"): allowed,
    /// and nothing changed. A DELETE, because the agent's compare-and-swap sends DELETE and
    /// CREATE in one batch. What it cannot see: a policy that allows only some names or types
    /// (the `route53:ChangeResourceRecordSets*` condition keys) refuses this name and may
    /// allow the agent's.
    pub(super) async fn route53_write(&self, needs: &Needs) -> Check {
        const NAME: &str = "permission-route53-change-record-sets";
        let zones: Vec<&Zone> = needs
            .zones
            .iter()
            .filter(|z| !(z.reference.private && self.private_zone_via_role))
            .collect();
        if zones.is_empty() {
            return Check::not_checked(
                NAME,
                "no Route53 zone the agent writes with these credentials (DNS is the user's, no zone was found, or the private zone is written through hostedZoneRole)",
            );
        }
        let fix = self.grant(format!(
            "allow {} on the cluster's hosted zones to the agent's identity (IAM policy; `bootstrap-agent permissions --cloud aws` prints it)",
            crate::permissions::aws_actions_of_line(NAME).join(" and ")
        ));
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let mut proven = Vec::new();
        for zone in zones {
            let id = zone.id.trim_start_matches("/hostedzone/");
            let name = format!(
                "bootstrap-agent-preflight-{nonce:x}-{}.{}",
                std::process::id(),
                zone.reference.domain
            );
            let result = match probe_delete(&name) {
                Ok(batch) => {
                    self.route53
                        .change_resource_record_sets()
                        .hosted_zone_id(id)
                        .change_batch(batch)
                        .send()
                        .await
                }
                Err(e) => {
                    return Check::warn(NAME, format!("could not build the probe: {e}"), None);
                }
            };
            match result {
                Err(e) if e.code() == Some("InvalidChangeBatch") => {
                    proven.push(format!("{id} ({})", zone.reference.domain))
                }
                Err(e) => {
                    let err = classify("ChangeResourceRecordSets", e);
                    let reason = format!(
                        "route53:ChangeResourceRecordSets on {id} ({}): {err}",
                        zone.reference.domain
                    );
                    return if is_denied(&err) {
                        Check::fail(NAME, reason, fix)
                    } else if err.is_transient() {
                        Check::warn(NAME, format!("could not check: {reason}"), None)
                    } else {
                        Check::fail(NAME, reason, fix)
                    };
                }
                // Only a record of that name with those values could be deleted: none exists.
                Ok(_) => {
                    return Check::warn(
                        NAME,
                        format!(
                            "the probe DELETE of {name} in {id} succeeded: a record of that name existed and is gone"
                        ),
                        None,
                    );
                }
            }
        }
        Check::pass(
            NAME,
            format!(
                "route53:ChangeResourceRecordSets on {}: a DELETE of a record that does not exist answered InvalidChangeBatch (authorized; nothing changed)",
                proven.join(", ")
            ),
        )
    }
}

/// The probe's batch: DELETE `name` A 60 192.0.2.1.
fn probe_delete(
    name: &str,
) -> Result<aws_sdk_route53::types::ChangeBatch, aws_sdk_route53::error::BuildError> {
    use aws_sdk_route53::types::{
        Change, ChangeAction, ChangeBatch, ResourceRecord, ResourceRecordSet, RrType,
    };
    let set = ResourceRecordSet::builder()
        .name(name)
        .r#type(RrType::A)
        .ttl(60)
        .resource_records(ResourceRecord::builder().value("192.0.2.1").build()?)
        .build()?;
    ChangeBatch::builder()
        .comment("bootstrap-agent preflight: proves the write permission; cannot apply")
        .changes(
            Change::builder()
                .action(ChangeAction::Delete)
                .resource_record_set(set)
                .build()?,
        )
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ZoneRef;
    use crate::aws::AwsSettings;
    use crate::preflight::Verdict;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A one-request HTTP server on loopback answering `status` with `body`; the request it
    /// got comes back through the handle.
    async fn answer_once(status: u16, body: String) -> (String, tokio::task::JoinHandle<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = conn.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if rest.len() >= length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: text/xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            conn.write_all(reply.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request).to_string()
        });
        (url, task)
    }

    fn route53_error(code: &str, message: &str) -> String {
        format!(
            "<?xml version=\"1.0\"?>\n<ErrorResponse xmlns=\"https://route53.amazonaws.com/doc/2013-04-01/\"><Error><Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error><RequestId>r-1</RequestId></ErrorResponse>"
        )
    }

    /// The probe as Route53 sees it: one DELETE of a record no one has, in the zone; Route53's
    /// AccessDenied fails the line (naming the instance role when there is no creds secret),
    /// its InvalidChangeBatch passes it.
    #[tokio::test]
    async fn the_route53_probe_passes_on_invalid_change_batch_and_fails_when_denied() {
        let needs = Needs {
            zones: vec![Zone {
                reference: ZoneRef {
                    domain: "mycluster.example.com".into(),
                    private: true,
                    id: None,
                    tags: Default::default(),
                },
                id: "/hostedzone/Z0PRIVATE".into(),
            }],
            ..Needs::default()
        };
        let cases = [
            (
                400,
                route53_error(
                    "InvalidChangeBatch",
                    "[Tried to delete resource record set [name='x', type='A'] but it was not found]",
                ),
                Verdict::Pass,
                true,
            ),
            (
                403,
                route53_error(
                    "AccessDenied",
                    "User: arn:aws:sts::123456789012:assumed-role/x-master-role/i-0 is not authorized to perform: route53:ChangeResourceRecordSets on resource: arn:aws:route53:::hostedzone/Z0PRIVATE",
                ),
                Verdict::Fail,
                false,
            ),
        ];
        for (status, body, verdict, with_secret) in cases {
            let (url, request) = answer_once(status, body).await;
            let settings = AwsSettings {
                region: "us-east-1".into(),
                infra_id: "mycluster-7xk2p".into(),
                keys: with_secret.then(|| crate::aws::StaticKeys {
                    access_key_id: "AKIATESTEXAMPLE00000".into(),
                    secret_access_key: "test-secret".into(),
                }),
                public_ipv4_pool: None,
            };
            // Without a creds secret the default chain must still find keys: none here, so
            // only the line's words are judged, not the identity.
            let mut config = crate::aws::load_config(&settings).await;
            if !with_secret {
                config = config
                    .into_builder()
                    .credentials_provider(
                        aws_credential_types::provider::SharedCredentialsProvider::new(
                            aws_sdk_ec2::config::Credentials::new(
                                "AKIATESTEXAMPLE00000",
                                "test-secret",
                                None,
                                None,
                                "test",
                            ),
                        ),
                    )
                    .build();
            }
            let config = crate::aws::with_endpoint(&config, Some(&url));
            let preflight = AwsPreflight::new(&config, &config, &config, &settings, false);
            let check = preflight.route53_write(&needs).await;
            assert_eq!(check.verdict, verdict, "{check:?}");
            let request = request.await.unwrap();
            assert!(
                request.starts_with("POST /2013-04-01/hostedzone/Z0PRIVATE/rrset"),
                "{request}"
            );
            assert!(
                request.contains("<Action>DELETE</Action>")
                    && request.contains("<Name>bootstrap-agent-preflight-")
                    && request.contains(".mycluster.example.com</Name>"),
                "{request}"
            );
            if verdict == Verdict::Fail {
                let fix = check.fix.clone().unwrap_or_default();
                assert!(fix.contains("route53:ChangeResourceRecordSets"), "{fix}");
                assert!(fix.contains("the instance's role"), "{fix}");
                assert!(check.reason.contains("AccessDenied"), "{check:?}");
            } else {
                assert!(check.reason.contains("nothing changed"), "{check:?}");
            }
        }
    }
}
