//! Changes made in the AWS world beside the agent, with boto3 as another party or a user
//! would: records of another writer, ENIs, EIPs, zones and subnets that are not ours, a
//! user's own reservations (UPI), a security group's tags.

use super::AwsPeers;
use anyhow::{Context, Result, bail};

impl AwsPeers {
    /// Sets the tag `key` = `value` on the security group `id`, or removes it (`None`), with
    /// boto3 as a user would.
    pub async fn tag_security_group(&self, id: &str, key: &str, value: Option<&str>) -> Result<()> {
        let mut args = vec!["tag-group", "--id", id, "--name", key];
        if let Some(value) = value {
            args.extend(["--value", value]);
        }
        self.script(&args).await.map(|_| ())
    }

    /// Another writer creates the CNAME record set `name` -> `target` in the private or
    /// public zone (`zone`).
    pub async fn write_cname(&self, zone: &str, name: &str, target: &str) -> Result<()> {
        self.script(&[
            "write", "--zone", zone, "--name", name, "--type", "CNAME", "--value", target,
        ])
        .await
        .map(|_| ())
    }

    /// Another writer sets a private/public record set to exactly `values`.
    pub async fn write_record(&self, zone: &str, name: &str, values: &[&str]) -> Result<()> {
        self.write(["--zone", zone], name, values).await
    }

    /// Creates EIPs/ENIs that are not ours (untagged, another cluster's, ours by cluster tag
    /// only): the agent must never touch them.
    pub async fn create_foreign(&self) -> Result<()> {
        self.script(&["foreign"]).await.map(|_| ())
    }

    /// Another party's ENI in `subnet`, holding `ip` when given; its id.
    pub async fn create_eni(
        &self,
        subnet: &str,
        ip: Option<&str>,
        description: &str,
    ) -> Result<String> {
        let mut args = vec!["eni", "--subnet", subnet, "--description", description];
        if let Some(ip) = ip {
            args.extend(["--ip", ip]);
        }
        self.script_id(&args).await
    }

    /// One ENI per IP in `subnet`, each holding its IP (e.g. the bootstrap hosts of several
    /// clusters); their ids.
    pub async fn create_enis(
        &self,
        subnet: &str,
        ips: &[&str],
        description: &str,
    ) -> Result<Vec<String>> {
        let mut args = vec!["eni", "--subnet", subnet, "--description", description];
        for ip in ips {
            args.extend(["--ip", ip]);
        }
        let out = self.script(&args).await?;
        serde_json::from_value(out["ids"].clone()).context("eni printed no ids")
    }

    /// Another hosted zone `name` (private: in the world's VPC); its id. [`AwsPeers::inspect`]
    /// shows its records under `zones_by_id`.
    pub async fn create_zone(&self, name: &str, private: bool) -> Result<String> {
        let kind = if private { "private" } else { "public" };
        self.script_id(&["zone", "--name", name, "--zone", kind])
            .await
    }

    /// Another private hosted zone `name`, in the world's VPC or (`other_vpc`) a new one,
    /// carrying `tags` (`key=value`); its id. (The world's own private zone carries the
    /// installer's tags, `Name=<infra-id>-int` and the owned cluster tag.)
    pub async fn create_private_zone_tagged(
        &self,
        name: &str,
        other_vpc: bool,
        tags: &[&str],
    ) -> Result<String> {
        let mut args = vec!["zone", "--name", name, "--zone", "private"];
        if other_vpc {
            args.push("--other-vpc");
        }
        for tag in tags {
            args.extend(["--tag", tag]);
        }
        self.script_id(&args).await
    }

    /// A subnet in a new VPC, not the world's: its id.
    pub async fn create_subnet_elsewhere(&self) -> Result<String> {
        self.script_id(&["subnet"]).await
    }

    /// A subnet of CIDR `cidr` in a new VPC (the /16 around it), e.g. the same range as one
    /// of the world's, as shared accounts have: its id.
    pub async fn create_subnet_in_another_vpc(&self, cidr: &str) -> Result<String> {
        self.script_id(&["subnet", "--cidr", cidr]).await
    }

    /// Another writer sets a record set of the zone `zone_id` to exactly `values`.
    pub async fn write_record_in(&self, zone_id: &str, name: &str, values: &[&str]) -> Result<()> {
        self.write(["--zone-id", zone_id], name, values).await
    }

    /// Another writer sets the record set `name` of the zone `zone` (flag and value).
    async fn write(&self, zone: [&str; 2], name: &str, values: &[&str]) -> Result<()> {
        let mut args = vec!["write", zone[0], zone[1], "--name", name];
        for v in values {
            args.extend(["--value", v]);
        }
        self.script(&args).await.map(|_| ())
    }

    /// The user's own reservation (UPI), made with boto3 as a person would: an EIP
    /// (`subnet` None) or an ENI in `subnet`, tagged `Name=<name>`; (id, IP).
    pub async fn create_named(&self, name: &str, subnet: Option<&str>) -> Result<(String, String)> {
        let out = match subnet {
            None => self.script(&["eip", "--name", name]).await?,
            Some(subnet) => {
                self.script(&["eni", "--subnet", subnet, "--name", name])
                    .await?
            }
        };
        let id = out["id"].as_str().context("printed no id")?.to_string();
        let ip = match out["ip"].as_str() {
            Some(ip) => ip.to_string(),
            None => {
                let world = self.inspect().await?;
                world["enis"]
                    .as_array()
                    .and_then(|enis| enis.iter().find(|e| e["id"] == id.as_str()))
                    .and_then(|e| e["ip"].as_str())
                    .context("the new ENI is not in inspect")?
                    .to_string()
            }
        };
        Ok((id, ip))
    }

    pub async fn delete_eni(&self, id: &str) -> Result<()> {
        self.script(&["delete-eni", "--id", id]).await.map(|_| ())
    }

    /// An untagged EIP: (allocation id, public IP).
    pub async fn allocate_eip(&self) -> Result<(String, String)> {
        let out = self.script(&["eip"]).await?;
        match (out["id"].as_str(), out["ip"].as_str()) {
            (Some(id), Some(ip)) => Ok((id.to_string(), ip.to_string())),
            _ => bail!("eip printed {out}"),
        }
    }

    /// Releases the EIP `allocation` with boto3, as its owner would.
    pub async fn release_eip(&self, allocation: &str) -> Result<()> {
        self.script(&["release-eip", "--allocation", allocation])
            .await
            .map(|_| ())
    }

    pub async fn associate(&self, allocation: &str, eni: &str) -> Result<()> {
        self.script(&["associate", "--allocation", allocation, "--eni", eni])
            .await
            .map(|_| ())
    }
}
