#!/bin/sh
# Slurm HealthCheckProgram: `cutrace doctor --check` on this node.  A
# problem drains the node with the finding as the reason ("cutrace: PROBLEM
# [layer] summary; fix: ..."); a healthy check resumes a node that cutrace
# drained (and no other); "could not check" only logs, unless
# CUTRACE_DRAIN_UNKNOWN=1.  In slurm.conf:
#
#   HealthCheckProgram=/usr/local/sbin/cutrace-healthcheck.sh
#   HealthCheckInterval=300
#
# Environment: CUTRACE (the cutrace to run, default: cutrace on PATH, then
# /usr/local/bin/cutrace), CUTRACE_CHECK_TIMEOUT (default 50s: Slurm waits
# for the program, keep it below HealthCheckInterval), CUTRACE_NODE (the
# node's Slurm name, default SLURMD_NODENAME, else hostname -s), SCONTROL.
# Exit status: cutrace's (0 healthy, 1 problem, 2 could not check).
set -u
cutrace=${CUTRACE:-$(command -v cutrace || echo /usr/local/bin/cutrace)}
scontrol=${SCONTROL:-scontrol}
node=${CUTRACE_NODE:-${SLURMD_NODENAME:-$(hostname -s)}}

line=$("$cutrace" doctor --check --timeout "${CUTRACE_CHECK_TIMEOUT:-50s}" 2>/dev/null)
rc=$?
[ -n "$line" ] || line="UNKNOWN could not check: $cutrace printed nothing (exit $rc)"
# Slurm keeps the reason as one line; keep it short enough to read in sinfo -R
reason=$(printf 'cutrace: %s' "$line" | tr -d '"' | cut -c1-240)

say() { logger -t cutrace-healthcheck -- "$node: $*" 2>/dev/null || echo "cutrace-healthcheck: $node: $*" >&2; }

case $rc in
0)
	# resume only what cutrace drained
	current=$("$scontrol" show node "$node" -o 2>/dev/null | sed -n 's/.* Reason=\(.*\)$/\1/p')
	case $current in
	cutrace:*) "$scontrol" update nodename="$node" state=resume && say "resumed: $line" ;;
	esac
	;;
1)
	"$scontrol" update nodename="$node" state=drain reason="$reason" && say "drained: $line"
	;;
*)
	say "$line"
	if [ "${CUTRACE_DRAIN_UNKNOWN:-0}" = 1 ]; then
		"$scontrol" update nodename="$node" state=drain reason="$reason"
	fi
	;;
esac
exit "$rc"
