//! Just enough of the EC2 Query API for the simulated AWS Load Balancer Controller to claim
//! addresses in moto: form-encoded POSTs (`Action=...&Version=2016-11-15`) over plain HTTP,
//! XML answers read into a small element tree. moto does not check signatures; the
//! `Authorization` header only carries the region in its credential scope, which moto uses to
//! pick the regional backend. Every call says it comes from Elastic Load Balancing
//! (`X-Sim-Requester: amazon-elb`), which moto_server.py needs to let it delete its own
//! requester-managed interfaces.

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;

const VERSION: &str = "2016-11-15";

/// An EC2 error answer (`<Errors><Error><Code>`), kept apart so callers can match the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: String,
    pub message: String,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// An XML element: its local name, its text and its children.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub text: String,
    pub children: Vec<Element>,
}

impl Element {
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The text of the child `name`, when present and not empty.
    pub fn text_of(&self, name: &str) -> Option<&str> {
        self.child(name)
            .map(|c| c.text.as_str())
            .filter(|t| !t.is_empty())
    }

    /// The `<item>`s of the child set `name` (EC2's list encoding).
    pub fn items(&self, name: &str) -> Vec<&Element> {
        self.child(name)
            .map(|s| s.children.iter().filter(|c| c.name == "item").collect())
            .unwrap_or_default()
    }
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Parses a whole document into its root element.
pub fn parse(xml: &str) -> Result<Element> {
    use xmlparser::{ElementEnd, Token, Tokenizer};
    let mut stack: Vec<Element> = Vec::new();
    let mut root = None;
    for token in Tokenizer::from(xml) {
        match token.context("malformed XML")? {
            Token::ElementStart { local, .. } => stack.push(Element {
                name: local.as_str().to_string(),
                ..Default::default()
            }),
            Token::Text { text } | Token::Cdata { text, .. } => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&unescape(text.as_str()));
                }
            }
            Token::ElementEnd {
                end: ElementEnd::Close(..) | ElementEnd::Empty,
                ..
            } => {
                let done = stack.pop().context("unbalanced XML")?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(done),
                    None => root = Some(done),
                }
            }
            _ => {}
        }
    }
    let mut root = root.context("XML without a root element")?;
    trim(&mut root);
    Ok(root)
}

fn trim(e: &mut Element) {
    e.text = e.text.trim().to_string();
    e.children.iter_mut().for_each(trim);
}

pub struct Ec2 {
    endpoint: url::Url,
    region: String,
}

impl Ec2 {
    pub fn new(endpoint: &str, region: &str) -> Result<Self> {
        let endpoint =
            url::Url::parse(endpoint).with_context(|| format!("bad EC2 endpoint {endpoint:?}"))?;
        if endpoint.scheme() != "http" {
            bail!(
                "the simulated controller talks plain HTTP to a local EC2 emulator, not {endpoint}"
            );
        }
        Ok(Self {
            endpoint,
            region: region.to_string(),
        })
    }

    /// Calls `action` with `params`; an EC2 error answer is an [`ApiError`] in the chain.
    pub async fn call(&self, action: &str, params: &[(String, String)]) -> Result<Element> {
        let host = self
            .endpoint
            .host_str()
            .context("EC2 endpoint without host")?;
        let port = self.endpoint.port_or_known_default().unwrap_or(80);
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("Action", action)
                .append_pair("Version", VERSION);
            for (k, v) in params {
                form.append_pair(k, v);
            }
            form.finish()
        };
        let stream = tokio::net::TcpStream::connect((host, port))
            .await
            .with_context(|| format!("cannot reach EC2 at {}", self.endpoint))?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        let scope = format!("sim/20240101/{}/ec2/aws4_request", self.region);
        let request = hyper::Request::post("/")
            .header("host", format!("{host}:{port}"))
            .header(
                "content-type",
                "application/x-www-form-urlencoded; charset=utf-8",
            )
            .header(
                "authorization",
                format!("AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders=host, Signature=0"),
            )
            // The simulated controller plays Elastic Load Balancing: the interfaces it makes
            // are requester-managed, and only it may delete them (moto_server.py).
            .header("x-sim-requester", "amazon-elb")
            .body(Full::new(Bytes::from(body)))?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        let text = String::from_utf8_lossy(&bytes);
        let root = parse(&text).with_context(|| format!("EC2 {action} answered {status}"))?;
        if !status.is_success() {
            let error = root
                .child("Errors")
                .and_then(|e| e.child("Error"))
                .map(|e| ApiError {
                    code: e.text_of("Code").unwrap_or("Unknown").to_string(),
                    message: e.text_of("Message").unwrap_or("").to_string(),
                })
                .unwrap_or_else(|| ApiError {
                    code: status.as_u16().to_string(),
                    message: text.chars().take(200).collect(),
                });
            return Err(anyhow!(error).context(format!("EC2 {action}")));
        }
        Ok(root)
    }
}

/// `Prefix.1=a&Prefix.2=b` (EC2's list parameters).
pub fn list_params(prefix: &str, values: &[&str]) -> Vec<(String, String)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("{prefix}.{}", i + 1), v.to_string()))
        .collect()
}

/// `Filter.1.Name=name&Filter.1.Value.1=value`.
pub fn filter(name: &str, value: &str) -> Vec<(String, String)> {
    vec![
        ("Filter.1.Name".into(), name.into()),
        ("Filter.1.Value.1".into(), value.into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_items_and_unescapes_text() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<DescribeNetworkInterfacesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
  <requestId>r</requestId>
  <networkInterfaceSet>
    <item>
      <networkInterfaceId>eni-1</networkInterfaceId>
      <description>ELB net/k8s-a-b-c/0123 &amp; more</description>
      <privateIpAddressesSet><item><privateIpAddress>10.0.4.5</privateIpAddress></item></privateIpAddressesSet>
      <tagSet/>
    </item>
  </networkInterfaceSet>
</DescribeNetworkInterfacesResponse>"#;
        let root = parse(xml).unwrap();
        let items = root.items("networkInterfaceSet");
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].text_of("networkInterfaceId"), Some("eni-1"));
        assert_eq!(
            items[0].text_of("description"),
            Some("ELB net/k8s-a-b-c/0123 & more")
        );
        assert_eq!(
            items[0].items("privateIpAddressesSet")[0].text_of("privateIpAddress"),
            Some("10.0.4.5")
        );
        assert!(items[0].items("tagSet").is_empty());
    }

    #[test]
    fn malformed_xml_is_an_error() {
        assert!(parse("<a><b></a>").is_err());
        assert!(parse("").is_err());
    }
}
