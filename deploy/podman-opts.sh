# Sourced by deploy/build-image.sh and deploy/smoke-test.sh: the options every podman build
# and run gets, in PODMAN_RUN_OPTS.
# runc is the runtime this was verified with. Podman asks for more open files (1048576) and
# processes than some hosts allow; where root may not raise its hard limits, starting a
# container then fails ("error setting rlimit type 7" / "type 6"). So ask for at most what
# this shell may have, and no more processes than 32768: on this project's build machine a
# higher count was refused although the shell's hard limit was 96365.
_limit() {
  local hard cap="$2"
  hard="$(ulimit -H "$1")"
  if [[ "$hard" == unlimited || "$hard" -gt "$cap" ]]; then echo "$cap"; else echo "$hard"; fi
}
PODMAN_RUN_OPTS=(
  --runtime runc
  --ulimit "nofile=$(_limit -n 65536):$(_limit -n 65536)"
  --ulimit "nproc=$(_limit -u 32768):$(_limit -u 32768)"
)
unset -f _limit
