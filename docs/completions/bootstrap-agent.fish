# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_bootstrap_agent_global_optspecs
    string join \n h/help V/version
end

function __fish_bootstrap_agent_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_bootstrap_agent_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_bootstrap_agent_using_subcommand
    set -l cmd (__fish_bootstrap_agent_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -s V -l version -d 'Print version'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "run" -d 'The daemon: reserve, seed DNS, set capabilities, apply the Services, gate, remove the bootstrap IP. Resumable'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "publish" -d 'Change the API\'s publishing scope (External <-> Internal) of a cluster `run` made, from an admin\'s machine with only --kubeconfig (the inputs and what `run` left are read from the cluster; one change at a time under a Lease): journaled and resumable; `--dry-run` prints every change first. Its state is the condition Progressing (reason ScopeChanged) in `status` and ConfigMap kube-system/bootstrap-agent'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "preflight" -d 'Check, before anything is created, whether it can work: credentials, permissions, quota, subnets, zones, the bootstrap IP and (with a kubeconfig) the cluster. Exit 2 when a check fails. Reads and dry runs only'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "capabilities" -d 'Capabilities: validate, write to ClusterVersion, filter manifests, updates'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "render" -d 'Print the LoadBalancer Services for the reserved IPs (for a UPI install by hand)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "apply" -d 'Render and server-side apply the Services'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "wait" -d 'The readiness gate: wait until every Service has ingress and a ready endpoint'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "plan" -d 'Print every change the agent would make (observes the cloud unless --offline)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "reserve" -d 'Reserve the static IPs for the API load balancers'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "publish-lb-ips" -d 'Cluster-hosted DNS only: reserve (as `reserve`), then write the IPs into the Infrastructure manifest\'s `cloudLoadBalancerConfig.clusterHosted` and the lb-config ConfigMap, for bootkube to read. Run it before bootkube; with cloud DNS it does nothing'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "dns" -d 'Seed or tear down the round-robin DNS records'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "teardown" -d 'Remove the bootstrap entries; with --all (failed install) release everything we own'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "status" -d 'Show steps, reservations, records and the last error from the journal'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "pause" -d 'Make a running `run` stop before its next step (it keeps its lock) until `resume`'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "resume" -d 'Let a paused `run` continue'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "permissions" -d 'Print the cloud permissions (AWS IAM policy, GCP custom role, Azure role definition) or the Kubernetes ClusterRole the agent\'s calls need, per command, scoped by the assets. The same table preflight asks from'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "manifests" -d 'Print manifests for the installer\'s `openshift/` dir that make the cluster bring what the agent relies on (the AWS Load Balancer Controller, through OLM)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_needs_command" -f -a "gather" -d 'Write a support bundle (.tar.gz): journal, status, plan, rendered Services, gate report, the cloud\'s view of ours and, with a kubeconfig, our Services, slices and Events'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l kubeconfig -d 'Kubeconfig of the (bootstrap) API server' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l templates -d 'Directory overriding the embedded templates (same layout: services/<cloud>/<file>)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l gate-timeout -d 'Overall deadline of the readiness gate' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l done-file -d 'Written (atomically, JSON) with `"phase": "gate-passed"` when the gate passes, and by `run` with `"phase": "complete"` once the bootstrap IP left DNS and the drain is over' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l drain-wait -d '`run`: after removing the bootstrap IP from DNS, wait before signalling `complete`, so cached answers expire while the bootstrap host still serves: `ttl` (the TTL our private records carry, read back from the zone) or a duration (0s turns the drain off)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l registry -d 'Capability registry file replacing the embedded templates/capabilities.yaml' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l feature-set -d 'The cluster\'s feature set (default: Default, or what --feature-gates-file says)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l feature-gates -d 'Enabled feature gates, comma separated (default: those of the feature set in the table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l feature-gates-file -d 'The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and the enabled gates: the installer\'s rendered one, or a running cluster\'s' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l release-version -d 'With a FeatureGate listing several versions: the release version whose gates count' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l cluster-version-crd -d 'The release\'s ClusterVersion CRD: the baseline and additional capabilities must be in its enums (an unknown one is an error naming the valid ones for that release)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l dns-seeding -d 'progressive: the private records hold the bootstrap IP first, and each reserved IP joins once its load balancer serves it; all-at-once: as the seed (every IP at once)' -r -f -a "progressive\t'The bootstrap IP first; each reserved IP once its load balancer serves it (the gate\'s proof for every Service that claims it)'
all-at-once\t'Every reserved IP with the bootstrap IP at once, as the seed does: clients meet dead addresses until the load balancers exist'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l wire-proof -d 'Before the bootstrap IP leaves DNS (and, progressive, before an IP joins), dial every load-balancer IP DNS keeps: TLS to 6443 verified with the kubeconfig\'s CA and GET /readyz == ok, a TLS handshake on 22623 where it serves the machine-config server. `off` for networks where the bootstrap host cannot reach the load balancers' -r -f -a "on\t''
off\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l wire-dial-override -d 'Dial another address instead: `IP:PORT=HOST:PORT` or `*:PORT=HOST:PORT` (a NAT between the bootstrap host and the load balancer; tests on loopback). Only where the connection goes changes, never what is verified. Repeatable' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l skip-preflight -d 'A preflight check (by name) whose failure does not stop `run`; repeatable' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l dns-check -d 'Where the wait reads the records: the cloud\'s zone (found as in cloud DNS) or the host\'s resolver' -r -f -a "zone\t'The zone as the cloud\'s DNS API answers (Route53 ListResourceRecordSets, Cloud DNS rrsets, Azure DNS record sets)'
resolver\t'The host\'s resolver (getaddrinfo): for DNS outside the cloud; sees what clients see, caches included'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -l dns-wait -d 'User-managed DNS: after printing the records of a stage, wait (up to the step deadline) until they answer before moving on. Without it the records are printed and the command goes on (exit 0, for scripting)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand run" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l kubeconfig -d 'Kubeconfig of the (bootstrap) API server' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l templates -d 'Directory overriding the embedded templates (same layout: services/<cloud>/<file>)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l scope -d 'The API\'s scope: External (a public load balancer and the public `api` record) or Internal (the internal load balancer and the private records only)' -r -f -a "External\t''
Internal\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l gate-timeout -d 'Deadline of the gate (External), and of the wait for an admin to delete the external Service (Internal, without --auto-delete); past it, exit 4 and a re-run resumes' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l drain-wait -d 'Going Internal: after the public `api` values left DNS, wait this long before their load balancer may go, so cached answers expire while it still serves: `ttl` (the TTL the record carried) or a duration (0s: none)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l wire-proof -d 'Before the bootstrap IP leaves DNS (and, progressive, before an IP joins), dial every load-balancer IP DNS keeps: TLS to 6443 verified with the kubeconfig\'s CA and GET /readyz == ok, a TLS handshake on 22623 where it serves the machine-config server. `off` for networks where the bootstrap host cannot reach the load balancers' -r -f -a "on\t''
off\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l wire-dial-override -d 'Dial another address instead: `IP:PORT=HOST:PORT` or `*:PORT=HOST:PORT` (a NAT between the bootstrap host and the load balancer; tests on loopback). Only where the connection goes changes, never what is verified. Repeatable' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l auto-delete -d 'Going Internal: delete our external Service once the public record is gone and drained, instead of waiting for an admin to delete it (the enhancement\'s auto-delete-load-balancer annotation)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -l dry-run -d 'Print every change the scope change would make, then stop (observes the cloud)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l kubeconfig -d 'Kubeconfig of the cluster (optional: without it the cluster checks are left out)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l templates -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l skip-preflight -d 'A preflight check (by name) whose failure does not stop `run`; repeatable' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand preflight" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and not __fish_seen_subcommand_from validate apply filter upgrade" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and not __fish_seen_subcommand_from validate apply filter upgrade" -f -a "validate" -d 'Validate the install-config `capabilities` block; print the enabled and known sets'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and not __fish_seen_subcommand_from validate apply filter upgrade" -f -a "apply" -d 'Write spec.capabilities into ClusterVersion `version` (server-side apply; never its status, which the cluster-version operator owns)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and not __fish_seen_subcommand_from validate apply filter upgrade" -f -a "filter" -d 'Decide, per object of a manifests dir, included or excluded (and why)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and not __fish_seen_subcommand_from validate apply filter upgrade" -f -a "upgrade" -d 'An update from one payload to another: implicitly enabled capabilities, deletions'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l assets -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l registry -d 'Capability registry file replacing the embedded templates/capabilities.yaml' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l feature-set -d 'The cluster\'s feature set (default: Default, or what --feature-gates-file says)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l feature-gates -d 'Enabled feature gates, comma separated (default: those of the feature set in the table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l feature-gates-file -d 'The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and the enabled gates: the installer\'s rendered one, or a running cluster\'s' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l release-version -d 'With a FeatureGate listing several versions: the release version whose gates count' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l cluster-version-crd -d 'The release\'s ClusterVersion CRD: the baseline and additional capabilities must be in its enums (an unknown one is an error naming the valid ones for that release)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from validate" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l assets -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l kubeconfig -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l registry -d 'Capability registry file replacing the embedded templates/capabilities.yaml' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l feature-set -d 'The cluster\'s feature set (default: Default, or what --feature-gates-file says)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l feature-gates -d 'Enabled feature gates, comma separated (default: those of the feature set in the table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l feature-gates-file -d 'The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and the enabled gates: the installer\'s rendered one, or a running cluster\'s' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l release-version -d 'With a FeatureGate listing several versions: the release version whose gates count' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l cluster-version-crd -d 'The release\'s ClusterVersion CRD: the baseline and additional capabilities must be in its enums (an unknown one is an error naming the valid ones for that release)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l wait -d 'How long to wait for ClusterVersion `version` when it does not exist and the asset dir has no manifests/cvo-overrides.yaml to create it from' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from apply" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l assets -d 'Installer asset dir whose install-config `capabilities` block gives the enabled set' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l baseline -d 'Without --assets: the baseline capability set (default vCurrent)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l additional -d 'Without --assets: additional enabled capabilities, comma separated' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l profile -d 'Cluster profile: objects need include.release.openshift.io/<profile>: "true"' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l exclude -d 'Identifiers in force for exclude.release.openshift.io/<id> (e.g. internal-openshift-hosted)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l major-version -d 'The release\'s major version, for release.openshift.io/major-version (default: the `version` of release-metadata in the manifests dir, as the CVO reads it; else unchecked)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l registry -d 'Capability registry file replacing the embedded templates/capabilities.yaml' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l feature-set -d 'The cluster\'s feature set (default: Default, or what --feature-gates-file says)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l feature-gates -d 'Enabled feature gates, comma separated (default: those of the feature set in the table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l feature-gates-file -d 'The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and the enabled gates: the installer\'s rendered one, or a running cluster\'s' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l release-version -d 'With a FeatureGate listing several versions: the release version whose gates count' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l cluster-version-crd -d 'The release\'s ClusterVersion CRD: the baseline and additional capabilities must be in its enums (an unknown one is an error naming the valid ones for that release)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l manifests -d 'The manifests dir (multi-document YAML files)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l out -d 'Write the included objects here, byte-for-byte' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -l explain -d 'One line per object with the reason'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from filter" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l assets -d 'Installer asset dir whose install-config `capabilities` block gives the enabled set' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l baseline -d 'Without --assets: the baseline capability set (default vCurrent)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l additional -d 'Without --assets: additional enabled capabilities, comma separated' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l profile -d 'Cluster profile: objects need include.release.openshift.io/<profile>: "true"' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l exclude -d 'Identifiers in force for exclude.release.openshift.io/<id> (e.g. internal-openshift-hosted)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l major-version -d 'The release\'s major version, for release.openshift.io/major-version (default: the `version` of release-metadata in the manifests dir, as the CVO reads it; else unchecked)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l registry -d 'Capability registry file replacing the embedded templates/capabilities.yaml' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l feature-set -d 'The cluster\'s feature set (default: Default, or what --feature-gates-file says)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l feature-gates -d 'Enabled feature gates, comma separated (default: those of the feature set in the table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l feature-gates-file -d 'The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and the enabled gates: the installer\'s rendered one, or a running cluster\'s' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l release-version -d 'With a FeatureGate listing several versions: the release version whose gates count' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l cluster-version-crd -d 'The release\'s ClusterVersion CRD: the baseline and additional capabilities must be in its enums (an unknown one is an error naming the valid ones for that release)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l from -d 'The payload the cluster runs now' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l to -d 'The payload it updates to' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l previously-enabled -d 'Capabilities the cluster has enabled now besides the configured ones, comma separated' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l kubeconfig -d 'Delete the objects annotated release.openshift.io/delete in this cluster (without it they are only listed)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l state-dir -d 'Where deleted objects are remembered (to warn when one reappears)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand capabilities; and __fish_seen_subcommand_from upgrade" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l templates -d 'Directory overriding the embedded templates' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand render" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l kubeconfig -d 'Kubeconfig of the (bootstrap) API server' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l templates -d 'Directory overriding the embedded templates (same layout: services/<cloud>/<file>)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand apply" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l kubeconfig -d 'Kubeconfig of the (bootstrap) API server' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l templates -d 'Directory overriding the embedded templates (same layout: services/<cloud>/<file>)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l gate-timeout -d 'Overall deadline of the readiness gate' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l done-file -d 'Written (atomically, JSON) with `"phase": "gate-passed"` when the gate passes, and by `run` with `"phase": "complete"` once the bootstrap IP left DNS and the drain is over' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l drain-wait -d '`run`: after removing the bootstrap IP from DNS, wait before signalling `complete`, so cached answers expire while the bootstrap host still serves: `ttl` (the TTL our private records carry, read back from the zone) or a duration (0s turns the drain off)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand wait" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l step -d 'Steps to plan, comma separated. Default: what is left of `run` per the journal, else all of it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l templates -d 'Directory overriding the embedded templates (the Services `run` would apply)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l kubeconfig -d 'The cluster, read only: our Services as it holds them, so that the plan shows a Service `apply-services` must replace (delete, wait, apply) because its load balancer never changes its addresses (AWS). Without it, every Service is planned as an apply' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l registry -d 'Capability registry file replacing the embedded templates/capabilities.yaml' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l feature-set -d 'The cluster\'s feature set (default: Default, or what --feature-gates-file says)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l feature-gates -d 'Enabled feature gates, comma separated (default: those of the feature set in the table generated from openshift/api at 2259ae9f14832ecb13cc52e0decf85ccba60685b)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l feature-gates-file -d 'The FeatureGate `cluster` object (YAML or JSON) whose status gives the feature set and the enabled gates: the installer\'s rendered one, or a running cluster\'s' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l release-version -d 'With a FeatureGate listing several versions: the release version whose gates count' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l cluster-version-crd -d 'The release\'s ClusterVersion CRD: the baseline and additional capabilities must be in its enums (an unknown one is an error naming the valid ones for that release)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l dns-seeding -d 'How `run` seeds DNS (as `run --dns-seeding`): planned the way `run` will do it' -r -f -a "progressive\t'The bootstrap IP first; each reserved IP once its load balancer serves it (the gate\'s proof for every Service that claims it)'
all-at-once\t'Every reserved IP with the bootstrap IP at once, as the seed does: clients meet dead addresses until the load balancers exist'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -l offline -d 'Assume nothing exists; make no cloud calls'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand plan" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand reserve" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand publish-lb-ips" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and not __fish_seen_subcommand_from seed teardown verify records" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and not __fish_seen_subcommand_from seed teardown verify records" -f -a "seed" -d 'api (public) -> reserved public IPs; api, api-int (private) -> bootstrap IP + reserved private IPs'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and not __fish_seen_subcommand_from seed teardown verify records" -f -a "teardown" -d 'Remove only the bootstrap IP from api / api-int'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and not __fish_seen_subcommand_from seed teardown verify records" -f -a "verify" -d 'Ask the zones whether the records hold what the journal says we wrote (and no longer the bootstrap IP once it was removed); print the difference, exit 1 when there is one'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and not __fish_seen_subcommand_from seed teardown verify records" -f -a "records" -d 'Print the record sets api / api-int must hold at this point of the install (from the journal): to create or change with user-managed DNS, what the agent writes otherwise'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l dns-check -d 'Where the wait reads the records: the cloud\'s zone (found as in cloud DNS) or the host\'s resolver' -r -f -a "zone\t'The zone as the cloud\'s DNS API answers (Route53 ListResourceRecordSets, Cloud DNS rrsets, Azure DNS record sets)'
resolver\t'The host\'s resolver (getaddrinfo): for DNS outside the cloud; sees what clients see, caches included'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -l dns-wait -d 'User-managed DNS: after printing the records of a stage, wait (up to the step deadline) until they answer before moving on. Without it the records are printed and the command goes on (exit 0, for scripting)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from seed" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l dns-check -d 'Where the wait reads the records: the cloud\'s zone (found as in cloud DNS) or the host\'s resolver' -r -f -a "zone\t'The zone as the cloud\'s DNS API answers (Route53 ListResourceRecordSets, Cloud DNS rrsets, Azure DNS record sets)'
resolver\t'The host\'s resolver (getaddrinfo): for DNS outside the cloud; sees what clients see, caches included'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -l dns-wait -d 'User-managed DNS: after printing the records of a stage, wait (up to the step deadline) until they answer before moving on. Without it the records are printed and the command goes on (exit 0, for scripting)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from teardown" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l dns-check -d 'Whose view counts: the zone as the cloud\'s DNS API answers, or the host\'s resolver' -r -f -a "zone\t'The zone as the cloud\'s DNS API answers (Route53 ListResourceRecordSets, Cloud DNS rrsets, Azure DNS record sets)'
resolver\t'The host\'s resolver (getaddrinfo): for DNS outside the cloud; sees what clients see, caches included'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand dns; and __fish_seen_subcommand_from records" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l kubeconfig -d 'With --all: the cluster whose Services (ours: rendered by the agent, with its labels) are deleted first, so their load balancers let go of the reserved addresses. Without it, an address a load balancer still holds is waited for (bounded by --step-timeout), as no cloud releases an address in use. (Ignored without --all; the unit\'s environment file sets it for every command.)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l templates -d 'Directory overriding the embedded templates (the Services that were applied)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -l all -d 'Also remove our reserved IPs from DNS and release every owned reservation'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand teardown" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand status" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand status" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand status" -l kubeconfig -d 'Day 2, on an admin\'s machine: without --state-dir, and with no journal in the bootstrap host\'s state dir, the day-2 journal of this cluster ($XDG_STATE_HOME/bootstrap-agent/<infra-id>), else what `run` left in the cluster' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand status" -l watch -d 'Print it again whenever it changes (redrawn in place on a terminal) until `run` is done; reads the journal without the lock, so it works beside a running daemon'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand status" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand pause" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand pause" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand resume" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand resume" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l cloud -d 'The cloud whose policy to print (the assets\' platform when --assets is given)' -r -f -a "aws\t''
gcp\t''
azure\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l assets -d 'Scope the policy to these assets (zones, resource groups, projects, the ownership tag). Without it: every action any plan may need, unscoped where the scope comes from assets' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l command -d 'Commands to cover, comma separated: run, teardown-all, publish-lb-ips, capabilities-apply, publish. Default: all of them' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l bootstrap-second-address -d 'GCP and Azure: as `run --bootstrap-second-address` (`off` leaves out what the bootstrap host\'s second address needs)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l for -d 'AWS: print the IAM policy of what `manifests aws-load-balancer-controller` brings instead of the agent\'s: the operator\'s, or the controller\'s it runs (from the operator\'s own CredentialsRequests)' -r -f -a "aws-load-balancer-operator\t'The operator itself (OLM installs it): reads subnets and VPCs, tags subnets'
aws-load-balancer-controller\t'The controller the operator runs: builds the NLBs of the agent\'s Services'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -l kube -d 'Print the Kubernetes ClusterRole the agent\'s cluster calls need instead'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand permissions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and not __fish_seen_subcommand_from aws-load-balancer-controller" -s h -l help -d 'Print help'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and not __fish_seen_subcommand_from aws-load-balancer-controller" -f -a "aws-load-balancer-controller" -d 'Namespace, OperatorGroup, Subscription and the AWSLoadBalancerController `cluster`: OLM installs OpenShift\'s aws-load-balancer-operator, which runs the AWS Load Balancer Controller the hand-over waits for. Credentials: minted by the cloud-credential operator from the operator\'s own CredentialsRequests, or with --sts-operator-role-arn and --sts-controller-role-arn the roles of an STS (manual mode) install'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l dir -d 'Write one file per document into this directory (the installer\'s `openshift/`), instead of a YAML stream on stdout' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l channel -d 'The OLM channel of the aws-load-balancer-operator package' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l source -d 'The CatalogSource serving the package (a disconnected install: the mirrored catalog\'s, e.g. the one oc-mirror wrote)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l source-namespace -d 'The CatalogSource\'s namespace' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l subnet-tagging -d 'spec.subnetTagging. manual: the operator writes no tags on the subnets (the agent\'s Services name their subnets); auto: it tags every untagged cluster subnet as public' -r -f -a "auto\t'The operator tags the cluster\'s untagged subnets `kubernetes.io/role/elb` (it assumes every untagged one is public) and keeps them tagged'
manual\t'The operator writes no subnet tags'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l sts-operator-role-arn -d 'STS: the IAM role of the operator itself (Subscription config.env ROLEARN)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -l sts-controller-role-arn -d 'STS: the IAM role of the controller (spec.credentialsRequestConfig.stsIAMRoleARN)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand manifests; and __fish_seen_subcommand_from aws-load-balancer-controller" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l assets -d 'Installer asset dir (manifests/, openshift/) [default: /opt/openshift]. `publish` and `gather` without it, where /opt/openshift does not exist, read the same documents from the cluster (--kubeconfig)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l state-dir -d 'Where the journal and its lock live [default: /var/lib/bootstrap-agent; a day-2 command that reads its inputs from the cluster: $XDG_STATE_HOME/bootstrap-agent/<infra-id>]' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l bootstrap-ip -d 'The bootstrap host\'s private IP (default: recorded in the journal, else detected)' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l bootstrap-second-address -d 'GCP and Azure: give the bootstrap host a second private address in `api-int` until stage 3 (what the masters\' apiserver-watcher makes of it: docs/clouds.md, "OpenShift\'s own nodes on GCP and Azure"): `host` (the cloud\'s alias IP / IP configuration, added to this host with iproute2), `cloud` (the host\'s own network agent brings it up), `off` (the bootstrap IP alone)' -r -f -a "host\t'The cloud gives the host the address (GCP alias IP, Azure secondary IP configuration) and the agent adds it to this host\'s interface with iproute2'
cloud\t'The cloud gives the host the address; the host\'s own network agent brings it up'
off\t'One address: the bootstrap IP alone (AWS, platform none, and UPI\'s adopt-only)'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l step-timeout -d 'Deadline for each step; its retries happen inside it' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l dns-ttl -d 'TTL of the record sets the agent creates (whole seconds, 1s to 1h). The bootstrap host must outlive it after it leaves DNS: `run` waits that long before `complete`' -r
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l output -r -f -a "text\t''
json\t''
yaml\t''"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l reservations -d 'UPI: YAML naming the reservations you made, per purpose (`private-ipv4: {name: my-vip}`; `id`, or on Azure private `ip`), where they do not carry the seed\'s names' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l dns -d '`manual`: DNS is yours (UPI) whatever the install-config says: the agent writes no record and looks up no zone, and prints the records to create (the user-managed mode)' -r -f -a "auto\t'As the install-config says (cloud DNS unless userProvisionedDNS is Enabled)'
manual\t'The user: the one user-managed DNS mode of the spec'"
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l kubeconfig -d 'Kubeconfig of the cluster (optional: without it the cluster part is left out)' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l templates -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l out -d 'Where to write the bundle' -r -F
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -l adopt-only -d 'UPI: reserve nothing; every reservation must be one you made (exit 2 naming what is missing)'
complete -c bootstrap-agent -n "__fish_bootstrap_agent_using_subcommand gather" -s h -l help -d 'Print help (see more with \'--help\')'
