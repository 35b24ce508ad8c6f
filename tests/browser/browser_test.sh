#!/bin/bash
# The HTML report and the SVG roofline as a person sees them: headless Chromium opens
# report.html (written by `hwprof report` from a synthetic profile), must log no console
# error, must run the page's script (its sortable table sorts), and screenshots of the page
# and of the roofline are written for a person to look at.
#
# Chromium (Debian `chromium`) is installed here when missing and this runs as root; the
# test skips (exit 77) with the reason only when it cannot be installed.
#
# usage: browser_test.sh HWPROF FIXTURE_WRITER OUTPUT_DIR
set -u
readonly skip=77
hwprof=$1
fixture=$2
out=$3

fail() { echo "FAIL: $*"; exit 1; }

find_browser() {
  local candidate
  for candidate in chromium chromium-browser; do
    if command -v "$candidate" >/dev/null 2>&1; then
      command -v "$candidate"
      return 0
    fi
  done
  return 1
}

browser=$(find_browser)
if [ -z "$browser" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: chromium is not installed and this test is not running as root to install it (apt-get install chromium)"
    exit $skip
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "SKIP: chromium is not installed and there is no apt-get to install it with"
    exit $skip
  fi
  echo "chromium is missing: running 'apt-get install -y chromium'"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; then
    echo "apt-get install failed: running 'apt-get update', then installing again"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }; then
      echo "SKIP: chromium could not be installed (no network or no package source?)"
      exit $skip
    fi
  fi
  browser=$(find_browser) || { echo "SKIP: chromium was installed but is not on PATH"; exit $skip; }
fi
echo "browser: $browser ($("$browser" --version 2>/dev/null))"

rm -rf "$out"
mkdir -p "$out" || fail "cannot create $out"
out=$(cd "$out" && pwd)

"$fixture" "$out/profile.json" || fail "could not write the fixture profile"
"$hwprof" report "$out/profile.json" --html "$out/report.html" --svg "$out/roofline.svg" --trace "$out/trace.json" >"$out/table.txt" ||
  fail "hwprof report failed"

# One headless Chromium run; its stderr (the page's console at --v=0) goes to $2.
run_browser() {
  local log=$1
  shift
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions --user-data-dir="$out/profile-dir" \
    --enable-logging=stderr --v=0 "$@" 2>"$log"
}

# Console errors: Chromium logs console messages as "...:CONSOLE(line)] "message", source: URL (line)".
console_errors() {
  grep -E 'CONSOLE|Uncaught' "$1" | grep -E 'Uncaught|ERROR:CONSOLE|Error' | grep -F "$2" || true
}

# The detector must catch a real error, or its silence would prove nothing.
printf '<!DOCTYPE html><html><body><script>undefinedFunction();</script></body></html>\n' >"$out/control.html"
run_browser "$out/control.log" --dump-dom "file://$out/control.html" >/dev/null
if [ -z "$(console_errors "$out/control.log" control.html)" ]; then
  cat "$out/control.log"
  fail "this Chromium does not log console errors on stderr: the check cannot work"
fi

# The report: a screenshot, and no console error.
run_browser "$out/report.log" --screenshot="$out/report.png" --window-size=1400,2000 "file://$out/report.html"
errors=$(console_errors "$out/report.log" report.html)
if [ -n "$errors" ]; then
  echo "$errors"
  fail "report.html logged console errors"
fi

# The page's script ran and sorts: the table starts with the most time to win (here also the
# slowest layer); one click on the Time column sorts it slowest first, a second fastest first.
# Read the first layer row of the DOM after each.
first_row_after_clicks() {
  local clicks=$1 page="$out/sorted-$1.html"
  local script="<script>var th = document.querySelector('#layer-table thead th:nth-child(4)'); for (var i = 0; i < $clicks; ++i) th.click();</script>"
  sed "s|</body>|${script}</body>|" "$out/report.html" >"$page"
  run_browser "$out/sorted-$clicks.log" --dump-dom "file://$page" >"$out/sorted-$clicks.dom"
  [ -z "$(console_errors "$out/sorted-$clicks.log" "sorted-$clicks.html")" ] || fail "sorting logged console errors"
  tr '\n' ' ' <"$out/sorted-$clicks.dom" | sed -e 's/.*id="layer-table"//' -e 's|</tbody>.*||' -e 's/^.*<tbody>//' -e 's|</tr>.*||'
}
grep -q 'tabindex="0"' <(run_browser "$out/dom.log" --dump-dom "file://$out/report.html") ||
  fail "the page's script did not run (no sortable header got a tabindex)"
initial=$(first_row_after_clicks 0)
once=$(first_row_after_clicks 1)
twice=$(first_row_after_clicks 2)
echo "$initial" | grep -q 'layer1.0.conv1 (backward)' || fail "the table should start with the most time to win, got: $initial"
echo "$once" | grep -q 'layer1.0.conv1 (backward)' || fail "one click on Time should put the slowest layer first, got: $once"
echo "$twice" | grep -q '>flatten<' || fail "two clicks on Time should put the fastest layer first, got: $twice"

# The sampling section: the flame graph is drawn for all layers at first; choosing the first
# layer in the selector redraws it for that layer alone and shows that layer's table. The page
# says what it drew in the flame box's data-drawn ("VALUE:FRAMES:SAMPLES").
drawn_after_choosing() {
  local index=$1 page="$out/flame-$1.html"
  local script="<script>var s = document.getElementById('flame-layer'); s.selectedIndex = $index; s.dispatchEvent(new Event('change'));</script>"
  sed "s|</body>|${script}</body>|" "$out/report.html" >"$page"
  run_browser "$out/flame-$index.log" --dump-dom "file://$page" >"$out/flame-$index.dom"
  [ -z "$(console_errors "$out/flame-$index.log" "flame-$index.html")" ] || fail "choosing a layer logged console errors"
  grep -o 'data-drawn="[^"]*"' "$out/flame-$index.dom"
}
all_layers=$(drawn_after_choosing 0)
one_layer=$(drawn_after_choosing 1)
echo "flame graph: $all_layers, then $one_layer"
case "$all_layers" in data-drawn=\"all:[1-9]*) ;; *) fail "the flame graph of all layers was not drawn: $all_layers" ;; esac
case "$one_layer" in data-drawn=\"0:[1-9]*) ;; *) fail "choosing the first layer did not redraw the flame graph: $one_layer" ;; esac
[ "${all_layers##*:}" != "${one_layer##*:}" ] || fail "the first layer's flame graph has as many samples as all layers': $one_layer"
tr '\n' ' ' <"$out/flame-1.dom" | grep -q '<table id="flame-top-0">' || fail "choosing the first layer did not show its table"
# Its screenshot: the section moved to the top of the page, where the screenshot's window is.
sed "s|</body>|<script>document.body.insertBefore(document.getElementById('sampling'), document.body.firstChild);</script></body>|" \
  "$out/flame-1.html" >"$out/flame-shot.html"
run_browser "$out/flame.log" --screenshot="$out/flame.png" --window-size=1400,1000 "file://$out/flame-shot.html"

# The roofline on its own, at its own size.
svg_height=$(grep -o 'height="[0-9]*"' "$out/roofline.svg" | head -1 | tr -dc 0-9)
run_browser "$out/roofline.log" --screenshot="$out/roofline.png" --window-size=1000,"$svg_height" "file://$out/roofline.svg"

# The screenshots exist, are PNGs of the asked size, and are not blank (a blank page
# compresses to a few kB).
check_png() {
  local png=$1 width=$2 height=$3
  [ -f "$png" ] || fail "$png was not written"
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$png is not a PNG"
  local w h size
  w=$(od -An -tu4 --endian=big -j16 -N4 "$png" | tr -d ' ')
  h=$(od -An -tu4 --endian=big -j20 -N4 "$png" | tr -d ' ')
  size=$(stat -c %s "$png")
  [ "$w" = "$width" ] && [ "$h" = "$height" ] || fail "$png is ${w}x${h}, expected ${width}x${height}"
  [ "$size" -gt 40000 ] || fail "$png is only $size bytes: a blank page?"
  echo "$png: ${w}x${h}, $size bytes"
}
check_png "$out/report.png" 1400 2000
check_png "$out/roofline.png" 1000 "$svg_height"
check_png "$out/flame.png" 1400 1000
echo "report.html: $(stat -c %s "$out/report.html") bytes, trace.json: $(stat -c %s "$out/trace.json") bytes"
echo "PASS: screenshots in $out"
