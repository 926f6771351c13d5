_bootstrap__agent() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="bootstrap__agent"
                ;;
            bootstrap__agent,apply)
                cmd="bootstrap__agent__subcmd__apply"
                ;;
            bootstrap__agent,capabilities)
                cmd="bootstrap__agent__subcmd__capabilities"
                ;;
            bootstrap__agent,dns)
                cmd="bootstrap__agent__subcmd__dns"
                ;;
            bootstrap__agent,gather)
                cmd="bootstrap__agent__subcmd__gather"
                ;;
            bootstrap__agent,manifests)
                cmd="bootstrap__agent__subcmd__manifests"
                ;;
            bootstrap__agent,pause)
                cmd="bootstrap__agent__subcmd__pause"
                ;;
            bootstrap__agent,permissions)
                cmd="bootstrap__agent__subcmd__permissions"
                ;;
            bootstrap__agent,plan)
                cmd="bootstrap__agent__subcmd__plan"
                ;;
            bootstrap__agent,preflight)
                cmd="bootstrap__agent__subcmd__preflight"
                ;;
            bootstrap__agent,publish)
                cmd="bootstrap__agent__subcmd__publish"
                ;;
            bootstrap__agent,publish-lb-ips)
                cmd="bootstrap__agent__subcmd__publish__subcmd__lb__subcmd__ips"
                ;;
            bootstrap__agent,render)
                cmd="bootstrap__agent__subcmd__render"
                ;;
            bootstrap__agent,reserve)
                cmd="bootstrap__agent__subcmd__reserve"
                ;;
            bootstrap__agent,resume)
                cmd="bootstrap__agent__subcmd__resume"
                ;;
            bootstrap__agent,run)
                cmd="bootstrap__agent__subcmd__run"
                ;;
            bootstrap__agent,status)
                cmd="bootstrap__agent__subcmd__status"
                ;;
            bootstrap__agent,teardown)
                cmd="bootstrap__agent__subcmd__teardown"
                ;;
            bootstrap__agent,wait)
                cmd="bootstrap__agent__subcmd__wait"
                ;;
            bootstrap__agent__subcmd__capabilities,apply)
                cmd="bootstrap__agent__subcmd__capabilities__subcmd__apply"
                ;;
            bootstrap__agent__subcmd__capabilities,filter)
                cmd="bootstrap__agent__subcmd__capabilities__subcmd__filter"
                ;;
            bootstrap__agent__subcmd__capabilities,upgrade)
                cmd="bootstrap__agent__subcmd__capabilities__subcmd__upgrade"
                ;;
            bootstrap__agent__subcmd__capabilities,validate)
                cmd="bootstrap__agent__subcmd__capabilities__subcmd__validate"
                ;;
            bootstrap__agent__subcmd__dns,records)
                cmd="bootstrap__agent__subcmd__dns__subcmd__records"
                ;;
            bootstrap__agent__subcmd__dns,seed)
                cmd="bootstrap__agent__subcmd__dns__subcmd__seed"
                ;;
            bootstrap__agent__subcmd__dns,teardown)
                cmd="bootstrap__agent__subcmd__dns__subcmd__teardown"
                ;;
            bootstrap__agent__subcmd__dns,verify)
                cmd="bootstrap__agent__subcmd__dns__subcmd__verify"
                ;;
            bootstrap__agent__subcmd__manifests,aws-load-balancer-controller)
                cmd="bootstrap__agent__subcmd__manifests__subcmd__aws__subcmd__load__subcmd__balancer__subcmd__controller"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        bootstrap__agent)
            opts="-h -V --help --version run publish preflight capabilities render apply wait plan reserve publish-lb-ips dns teardown status pause resume permissions manifests gather"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__apply)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --kubeconfig --templates --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__capabilities)
            opts="-h --help validate apply filter upgrade"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__capabilities__subcmd__apply)
            opts="-h --assets --kubeconfig --registry --feature-set --feature-gates --feature-gates-file --release-version --cluster-version-crd --wait --output --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --release-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-version-crd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__capabilities__subcmd__filter)
            opts="-h --assets --baseline --additional --profile --exclude --major-version --registry --feature-set --feature-gates --feature-gates-file --release-version --cluster-version-crd --manifests --out --explain --output --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --additional)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --major-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --release-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-version-crd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --manifests)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__capabilities__subcmd__upgrade)
            opts="-h --assets --baseline --additional --profile --exclude --major-version --registry --feature-set --feature-gates --feature-gates-file --release-version --cluster-version-crd --from --to --previously-enabled --kubeconfig --state-dir --output --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --baseline)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --additional)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --profile)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --major-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --release-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-version-crd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --previously-enabled)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__capabilities__subcmd__validate)
            opts="-h --assets --registry --feature-set --feature-gates --feature-gates-file --release-version --cluster-version-crd --output --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --release-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-version-crd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__dns)
            opts="-h --help seed teardown verify records"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__dns__subcmd__records)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__dns__subcmd__seed)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --dns-wait --dns-check --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --dns-check)
                    COMPREPLY=($(compgen -W "zone resolver" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__dns__subcmd__teardown)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --dns-wait --dns-check --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --dns-check)
                    COMPREPLY=($(compgen -W "zone resolver" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__dns__subcmd__verify)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --dns-check --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --dns-check)
                    COMPREPLY=($(compgen -W "zone resolver" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__gather)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --kubeconfig --templates --out --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__manifests)
            opts="-h --help aws-load-balancer-controller"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__manifests__subcmd__aws__subcmd__load__subcmd__balancer__subcmd__controller)
            opts="-h --dir --channel --source --source-namespace --subnet-tagging --sts-operator-role-arn --sts-controller-role-arn --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --channel)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --source)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --source-namespace)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --subnet-tagging)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --sts-operator-role-arn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sts-controller-role-arn)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__pause)
            opts="-h --state-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__permissions)
            opts="-h --cloud --assets --command --bootstrap-second-address --kube --for --output --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --cloud)
                    COMPREPLY=($(compgen -W "aws gcp azure" -- "${cur}"))
                    return 0
                    ;;
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --command)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --for)
                    COMPREPLY=($(compgen -W "aws-load-balancer-operator aws-load-balancer-controller" -- "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__plan)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --offline --step --templates --kubeconfig --registry --feature-set --feature-gates --feature-gates-file --release-version --cluster-version-crd --dns-seeding --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --step)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --release-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-version-crd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-seeding)
                    COMPREPLY=($(compgen -W "progressive all-at-once" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__preflight)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --kubeconfig --templates --skip-preflight --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --skip-preflight)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__publish)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --kubeconfig --templates --scope --auto-delete --dry-run --gate-timeout --drain-wait --wire-proof --wire-dial-override --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --scope)
                    COMPREPLY=($(compgen -W "External Internal" -- "${cur}"))
                    return 0
                    ;;
                --gate-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --drain-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --wire-proof)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --wire-dial-override)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__publish__subcmd__lb__subcmd__ips)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__render)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --templates --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__reserve)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__resume)
            opts="-h --state-dir --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__run)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --kubeconfig --templates --gate-timeout --done-file --drain-wait --registry --feature-set --feature-gates --feature-gates-file --release-version --cluster-version-crd --dns-seeding --wire-proof --wire-dial-override --skip-preflight --dns-wait --dns-check --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gate-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --done-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --drain-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --registry)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-set)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --feature-gates-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --release-version)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --cluster-version-crd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-seeding)
                    COMPREPLY=($(compgen -W "progressive all-at-once" -- "${cur}"))
                    return 0
                    ;;
                --wire-proof)
                    COMPREPLY=($(compgen -W "on off" -- "${cur}"))
                    return 0
                    ;;
                --wire-dial-override)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --skip-preflight)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-check)
                    COMPREPLY=($(compgen -W "zone resolver" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__status)
            opts="-h --state-dir --output --watch --kubeconfig --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__teardown)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --all --kubeconfig --templates --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        bootstrap__subcmd__agent__subcmd__wait)
            opts="-h --assets --state-dir --bootstrap-ip --bootstrap-second-address --step-timeout --dns-ttl --output --reservations --adopt-only --dns --kubeconfig --templates --gate-timeout --done-file --drain-wait --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --assets)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-ip)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --bootstrap-second-address)
                    COMPREPLY=($(compgen -W "host cloud off" -- "${cur}"))
                    return 0
                    ;;
                --step-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns-ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "text json yaml" -- "${cur}"))
                    return 0
                    ;;
                --reservations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dns)
                    COMPREPLY=($(compgen -W "auto manual" -- "${cur}"))
                    return 0
                    ;;
                --kubeconfig)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --templates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --gate-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --done-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --drain-wait)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _bootstrap__agent -o nosort -o bashdefault -o default bootstrap-agent
else
    complete -F _bootstrap__agent -o bashdefault -o default bootstrap-agent
fi
