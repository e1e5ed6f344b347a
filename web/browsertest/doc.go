// Package browsertest loads the web calculator in headless Chromium through
// chromedriver and checks that the numbers it shows equal the CLI's --json.
// It runs only with DPCALC_BROWSER_TEST=1 (.ci/run sets it and installs
// Debian's chromium and chromium-driver when missing); CHROMIUM and
// CHROMEDRIVER override the binaries' paths.
package browsertest
