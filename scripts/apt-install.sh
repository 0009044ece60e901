# Sourced by scripts/setup.sh and scripts/sanitize.sh:
#   apt_install LOG-PREFIX PACKAGE...
# installs the Debian packages that are missing, without their recommends,
# unless CONV3D_SKIP_APT=1. dpkg skips its fsync calls (--force-unsafe-io):
# unpacking LLVM and MLIR (about 1.2 GB) is what the step spends its time
# on, and a machine that loses power mid-install is set up again anyway.
apt_install() {
  local prefix="$1" p
  shift
  [[ "${CONV3D_SKIP_APT:-0}" == 1 ]] && return 0
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    printf '[%s] Debian packages present\n' "$prefix"
    return 0
  fi
  printf '[%s] installing %s\n' "$prefix" "${missing[*]}"
  local sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
    --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
    "${missing[@]}" >/dev/null
}
