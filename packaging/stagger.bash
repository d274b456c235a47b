# bash completion for stagger(1): groups, commands, options, and job and
# plan files where a command takes one. Installed by `make install` into
# $(datadir)/bash-completion/completions/stagger.

_stagger_commands ()
{
  case "$1" in
    job) echo "create kill status list diff restart history revert inspect" ;;
    update) echo "start info pause resume abort rollback pulse list wait timeline" ;;
    plan) echo "start diff status list wait pause resume abort rollback approve" ;;
    task) echo "logs" ;;
    host) echo "list drain undrain maintenance" ;;
    cluster) echo "status" ;;
    quota) echo "get set" ;;
    tier) echo "list" ;;
    admin) echo "backup backups restore reconcile prune" ;;
  esac
}

_stagger_options ()
{
  local common="--url --auth-user --leader-wait --json --help"
  case "$1 $2" in
    "update start") echo "$common --message --wait --force --dry-run" ;;
    "update info"|"update wait") echo "$common --id" ;;
    "update timeline") echo "$common --id --by --width" ;;
    "update pause"|"update resume"|"update abort"|"update rollback") echo "$common --message --id" ;;
    "update pulse") echo "$common --every --id" ;;
    "update list") echo "$common --status --user --limit" ;;
    "job kill") echo "$common --message" ;;
    "job revert") echo "$common --to-version --message --wait" ;;
    "task logs") echo "$common --stderr --tail --follow --process --run" ;;
    "job restart") echo "$common --batch-size --watch-secs --max-per-instance-failures --max-total-failures --message --wait" ;;
    "plan start") echo "$common --message --wait --set" ;;
    "plan diff") echo "$common --set" ;;
    "plan list") echo "$common --active --name --limit" ;;
    "plan pause"|"plan resume"|"plan abort"|"plan rollback"|"plan approve") echo "$common --message" ;;
    "host drain") echo "$common --batch-size --min-in-service --watch-secs --message --wait --force" ;;
    "host maintenance") echo "$common --count --percentage --duration --coordinator --status-key --timeout" ;;
    "admin restore") echo "$common --delete --dry-run" ;;
    "admin reconcile") echo "$common --implicit --batch-size" ;;
    *) echo "$common" ;;
  esac
}

_stagger ()
{
  local cur="${COMP_WORDS[COMP_CWORD]}" group="" command="" i
  COMPREPLY=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${COMP_WORDS[i]}" in
      --url|--auth-user|--leader-wait|--message|-m|--id|--every|--status|--user|--limit|--batch-size|--watch-secs|--max-per-instance-failures|--max-total-failures|--to-version|--by|--width|--tail|--name|--min-in-service|--process|-p|--run|--set|-s|--count|--percentage|--duration|--coordinator|--status-key|--timeout|--delete) ((i++)) ;;
      -*) ;;
      *) if [[ -z $group ]]; then group="${COMP_WORDS[i]}"; elif [[ -z $command ]]; then command="${COMP_WORDS[i]}"; fi ;;
    esac
  done
  if [[ $cur == -* ]]; then
    if [[ -z $group ]]; then
      COMPREPLY=($(compgen -W "--url --auth-user --leader-wait --json --help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$(_stagger_options "$group" "$command")" -- "$cur"))
    fi
  elif [[ -z $group ]]; then
    COMPREPLY=($(compgen -W "job update plan task host cluster quota tier admin" -- "$cur"))
  elif [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "$(_stagger_commands "$group")" -- "$cur"))
  else
    case "$group $command" in
      "job create"|"job diff"|"job inspect"|"update start"|"plan start"|"plan diff")
        COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur")) ;;
    esac
  fi
}
complete -F _stagger stagger
