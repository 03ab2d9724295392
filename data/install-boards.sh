#!/bin/sh
# install-boards.sh SRCDIR DATADIR — meson install script: copies the sysfs
# trees of the simulated boards to DESTDIR/DATADIR/heatcurve/boards.
#
# Not install_subdir(): meson 1.0.1 (Debian 12) installs each directory
# symlink as an empty directory (mesonbuild/meson#12793), and the boards'
# sysfs trees are made of such links (/sys/class/thermal/thermal_zone0 ->
# ../../devices/...), so the installed boards had no sensors. cp -R keeps
# symlinks as symlinks; ownership is left to the installing user.
set -eu

src=${1:?usage: install-boards.sh SRCDIR DATADIR}
datadir=${2:?usage: install-boards.sh SRCDIR DATADIR}
case $datadir in
/*) ;;
*) datadir=${MESON_INSTALL_PREFIX:?}/$datadir ;;
esac
dest=${DESTDIR:+$DESTDIR/}$datadir/heatcurve/boards
dest=$(printf '%s' "$dest" | sed 's://*:/:g')

[ "${MESON_INSTALL_DRY_RUN:-}" = "" ] || { echo "Would install boards to $dest"; exit 0; }
echo "Installing boards to $dest"
rm -rf "$dest"
mkdir -p "$dest"
cp -R -P --preserve=mode,timestamps,links --no-preserve=ownership "$src/." "$dest/"
