/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterfind: finds the photon clusters of a MÖNCH raw run, trained on a
 * dark run, and writes them as an aare-compatible .clust file with the
 * energy spectrum (.csv) and hit map (.npy). With --simulate it runs the
 * same job on simulated runs and compares the clusters with the ground
 * truth. It also images the photons (clusterfind_imaging.c). This file
 * reads the options; clusterfind_run.c does the job.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfind.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: clusterfind --pedestal DARK_master_0.json --data RUN_master_0.json\n"
        "                   [--output OUT.clust] [--spectrum OUT.csv] [--hitmap OUT.npy]\n"
        "                   [options]\n"
        "       clusterfind --simulate FRAMES [--seed N] [outputs] [options]\n"
        "\n"
        "  --pedestal MASTER.json  dark run: trains the pedestal\n"
        "  --data MASTER.json      data run: its clusters are found\n"
        "  --output OUT.clust      clusters, aare's .clust format\n"
        "  --spectrum OUT.csv      energy spectrum: low,high,count per bin, then\n"
        "                          underflow and overflow\n"
        "  --hitmap OUT.npy        cluster centres per pixel, uint32 (numpy.load)\n"
        "  --noise OUT.npy         the pedestal's rms per pixel after training, ADU,\n"
        "                          float64 (numpy.load)\n"
        "  --analog OUT.npy        the analog image: each pixel's pedestal-subtracted\n"
        "                          values summed over the data frames, float64\n"
        "  --chip moench03|moench04  the chip of runs taken with the chip test\n"
        "                          board, whose master files do not say it\n"
        "  --cluster-size N|NxM    cluster size, odd, 3..9 (default 3)\n"
        "  --nsigma X              threshold in noise rms (default 5)\n"
        "  --pedestal-frames N     dark frames to train on (default 1000; a shorter\n"
        "                          dark run uses what it has, at least 2)\n"
        "  --energy sum|sum2x2     cluster energy for the spectrum (default sum)\n"
        "  --bins N --min X --max X  spectrum bins on [min, max) ADU\n"
        "                          (default 400 on [0, 2000))\n"
        "  --peak-range LO:HI      fit the spectrum's line on [LO, HI) ADU\n"
        "                          (default: around the highest bin)\n"
        "  --backend auto|cpu|cuda (default auto)\n"
        "  --precision float|double (default float)\n"
        "  --threads N             CPU threads, 0 = one per CPU (default 0)\n"
        "  --adc-mask M            mask applied to every raw value (default 0x3FFF)\n"
        "  --common-mode none|supercolumn|row|half  remove each region's shared\n"
        "                          offset, frame by frame (default none)\n"
        "  --gain-map FILE         per-pixel gains, .npy (float32/64) or TIFF\n"
        "                          (slsDetectorCalibration's), of (rows, cols)\n"
        "  --gain-unit relative|adu-per-kev  the map's unit (default relative:\n"
        "                          clusters in ADU of a gain-1 pixel); with\n"
        "                          adu-per-kev clusters are in eV and energies\n"
        "                          here in keV (spectrum default [0, 20) keV)\n"
        "  --simulate FRAMES       built-in demo: simulate a dark run and FRAMES data\n"
        "                          frames of 400 x 400 pixels, find the clusters and\n"
        "                          compare them with the simulated photons\n"
        "  --seed N                simulator seed (default 1)\n"
        "  --flux X                simulated photons per frame (default 2330)\n"
        "  --pattern none|slits|grid|star  a mask in front of the simulated\n"
        "                          sensor (default none: a flat field)\n"
        "  --pattern-period P      its period in pixels (default 1)\n"
        "  --hot-pixels N --dead-pixels N  defects planted in the simulation\n"
        "  --sim-common-mode MODE:RMS  a per-frame offset of RMS ADU shared by\n"
        "                          each region (MODE as --common-mode) of the\n"
        "                          simulated frames\n"
        "  --gain-calibrate OUT.npy  a flat field's gain map: each pixel's line\n"
        "                          in --peak-range fitted (docs/clusterfind.md)\n"
        "  --gain-events single|sum  the clusters a pixel's line is made of:\n"
        "                          single (default): those whose centre holds\n"
        "                          80 %% of the sum; sum: all (run again with\n"
        "                          the map to converge)\n"
        "  --gain-min-photons N    fewer photons in a pixel's line: the pixel\n"
        "                          is flagged, not fitted (default 50)\n"
        "  --gain-line-energy KEV  the flat field's line: the map in ADU per\n"
        "                          keV (default: relative to the median pixel)\n"
        "  --gain-mask OUT.npy     the pixels the calibration could not fit, as\n"
        "                          a mask for --mask\n"
        "  --sim-noise LO:HI       each simulated pixel's noise rms, uniform in\n"
        "                          [LO, HI) ADU (default 15:50)\n"
        "  --sim-gain-spread X     each simulated pixel's gain 1 + X * N(0, 1),\n"
        "                          X in [0, 0.2] (default 0)\n"
        "  --sim-gain-map OUT.npy  the simulated pixels' gains, float64\n"
        "\n"
        "Imaging (docs/clusterfind.md):\n"
        "  --mask FILE.npy         bad pixels, uint8 or bool of (rows, cols),\n"
        "                          1 = bad: never a centre, 0 in clusters\n"
        "  --auto-mask K           also mask pixels whose noise is 0 or above K\n"
        "                          times the median (K >= 1)\n"
        "  --energy-window LO:HI   photons: clusters of energy in [LO, HI) ADU\n"
        "                          (the --energy chosen; default every cluster)\n"
        "  --eta eta2|eta2full|eta3  eta function (default eta2)\n"
        "  --eta-bins B            calibration bins a side (default 100)\n"
        "  --eta-calibrate OUT.eta  the eta calibration of this run's photons\n"
        "                          (a flat-field run)\n"
        "  --eta-map IN.eta        a calibration to interpolate with\n"
        "  --subpixels S           image sub-pixels a pixel side, 1..25\n"
        "                          (default 5)\n"
        "  --image OUT.npy         interpolated image, uint32 (rows*S, cols*S)\n"
        "  --counts OUT.npy        counting image: photons per pixel, uint32\n"
        "  --photons OUT.npy       one record per photon: frame, x, y, energy\n"
        "  --help, --version\n"
        "\n"
        "Exit status: 0 on success, 1 when the run failed (nothing written),\n"
        "2 for bad options, 3 when the input was damaged (a missing or truncated\n"
        "data file, padded frames): the outputs then hold every complete frame.\n"
        "Outputs appear under their names only when complete.\n");
}

/* Parses a whole unsigned number in [low, high]; base 0 takes 0x too. */
static bool parse_unsigned(const char *text, uint64_t low, uint64_t high,
                           uint64_t *value)
{
    char *end;
    errno = 0;
    if (text[0] == '-' || text[0] == '\0')
        return false;
    unsigned long long parsed = strtoull(text, &end, 0);
    if (errno != 0 || *end != '\0' || parsed < low || parsed > high)
        return false;
    *value = parsed;
    return true;
}

static bool parse_real(const char *text, double *value)
{
    char *end;
    errno = 0;
    *value = strtod(text, &end);
    return errno == 0 && end != text && *end == '\0' && isfinite(*value);
}

static bool parse_cluster_size(const char *text, uint32_t *x, uint32_t *y)
{
    char copy[32];
    if (strlen(text) >= sizeof copy)
        return false;
    strcpy(copy, text);
    char *cross = strchr(copy, 'x');
    if (cross != NULL)
        *cross = '\0';
    uint64_t nx, ny;
    if (!parse_unsigned(copy, 1, 99, &nx) ||
        !parse_unsigned(cross != NULL ? cross + 1 : copy, 1, 99, &ny))
        return false;
    *x = (uint32_t)nx;
    *y = (uint32_t)ny;
    return true;
}

/* LO:HI, two finite numbers with LO < HI. */
static bool parse_window(const char *text, double *low, double *high)
{
    char copy[64];
    if (strlen(text) >= sizeof copy)
        return false;
    strcpy(copy, text);
    char *colon = strchr(copy, ':');
    if (colon == NULL)
        return false;
    *colon = '\0';
    return parse_real(copy, low) && parse_real(colon + 1, high) && *low < *high;
}

/* Looks word up in a list of names; returns its index or -1. */
static int choose(const char *word, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(word, names[i]) == 0)
            return i;
    return -1;
}

static int bad_option(const char *option, const char *value, const char *why)
{
    fprintf(stderr, "clusterfind: --%s %s: %s (see clusterfind --help)\n",
            option, value, why);
    return EXIT_USAGE;
}

/* Applies one option; returns 0 or an exit status. */
static int apply(struct options *o, const char *name, const char *value)
{
    static const char *const energies[] = {"sum", "sum2x2"};
    static const char *const backends[] = {"auto", "cpu", "cuda"};
    static const char *const precisions[] = {"float", "double"};
    static const char *const etas[] = {"eta2", "eta2full", "eta3"};
    static const char *const patterns[] = {"none", "slits", "grid", "star"};
    static const char *const chips[] = {"moench03", "moench04"};
    uint64_t number;
    int index;
    if (strcmp(name, "pedestal") == 0)
        o->pedestal = value;
    else if (strcmp(name, "data") == 0)
        o->data = value;
    else if (strcmp(name, "output") == 0)
        o->output = value;
    else if (strcmp(name, "spectrum") == 0)
        o->spectrum = value;
    else if (strcmp(name, "hitmap") == 0)
        o->hitmap = value;
    else if (strcmp(name, "noise") == 0)
        o->noise = value;
    else if (strcmp(name, "analog") == 0)
        o->analog = value;
    else if (strcmp(name, "chip") == 0) {
        if ((index = choose(value, chips, 2)) < 0)
            return bad_option(name, value, "moench03 or moench04");
        o->chip = (cc_raw_chip)(CC_RAW_CHIP_MOENCH03 + index);
    } else if (strcmp(name, "cluster-size") == 0) {
        if (!parse_cluster_size(value, &o->size_x, &o->size_y))
            return bad_option(name, value, "give N or NxM");
    } else if (strcmp(name, "nsigma") == 0) {
        if (!parse_real(value, &o->nsigma) || !(o->nsigma > 0))
            return bad_option(name, value, "a number above 0 is needed");
    } else if (strcmp(name, "pedestal-frames") == 0) {
        if (!parse_unsigned(value, 2, CC_PEDESTAL_FRAMES_MAX, &number))
            return bad_option(name, value, "2..16777216 frames");
        o->pedestal_frames = (uint32_t)number;
    } else if (strcmp(name, "energy") == 0) {
        if ((index = choose(value, energies, 2)) < 0)
            return bad_option(name, value, "sum or sum2x2");
        o->energy = (cc_energy)index;
    } else if (strcmp(name, "bins") == 0) {
        if (!parse_unsigned(value, 1, 1u << 24, &number))
            return bad_option(name, value, "1..16777216 bins");
        o->bins = (uint32_t)number;
    } else if (strcmp(name, "min") == 0) {
        if (!parse_real(value, &o->min))
            return bad_option(name, value, "a number is needed");
        o->range_given = true;
    } else if (strcmp(name, "max") == 0) {
        if (!parse_real(value, &o->max))
            return bad_option(name, value, "a number is needed");
        o->range_given = true;
    } else if (strcmp(name, "backend") == 0) {
        if ((index = choose(value, backends, 3)) < 0)
            return bad_option(name, value, "auto, cpu or cuda");
        o->backend = (cc_backend)index;
    } else if (strcmp(name, "precision") == 0) {
        if ((index = choose(value, precisions, 2)) < 0)
            return bad_option(name, value, "float or double");
        o->precision = (cc_precision)index;
    } else if (strcmp(name, "threads") == 0) {
        if (!parse_unsigned(value, 0, CC_THREADS_MAX, &number))
            return bad_option(name, value, "0..256 (0 = one per CPU)");
        o->threads = (uint32_t)number;
    } else if (strcmp(name, "adc-mask") == 0) {
        if (!parse_unsigned(value, 1, 0xFFFF, &number))
            return bad_option(name, value, "1..0xFFFF");
        o->adc_mask = (uint16_t)number;
    } else if (strcmp(name, "simulate") == 0) {
        if (!parse_unsigned(value, 1, 100000000, &number))
            return bad_option(name, value, "1..100000000 frames");
        o->simulate = number;
    } else if (strcmp(name, "seed") == 0) {
        if (!parse_unsigned(value, 0, UINT64_MAX, &o->seed))
            return bad_option(name, value, "a whole number is needed");
    } else if (strcmp(name, "flux") == 0) {
        if (!parse_real(value, &o->flux) || o->flux < 0 || o->flux > 1e7)
            return bad_option(name, value, "0..1e7 photons per frame");
    } else if (strcmp(name, "pattern") == 0) {
        if ((index = choose(value, patterns, 4)) < 0)
            return bad_option(name, value, "none, slits, grid or star");
        o->pattern = (cc_sim_pattern)index;
    } else if (strcmp(name, "pattern-period") == 0) {
        if (!parse_real(value, &o->pattern_period) || !(o->pattern_period > 0))
            return bad_option(name, value, "a period above 0 pixels");
    } else if (strcmp(name, "hot-pixels") == 0 ||
               strcmp(name, "dead-pixels") == 0) {
        if (!parse_unsigned(value, 0, 400 * 400, &number))
            return bad_option(name, value, "0..160000 pixels");
        *(name[0] == 'h' ? &o->hot_pixels : &o->dead_pixels) = (uint32_t)number;
    } else if (strcmp(name, "common-mode") == 0) {
        if (cc_common_mode_parse(value, &o->common_mode, NULL) != CC_OK)
            return bad_option(name, value, "none, supercolumn, row or half");
    } else if (strcmp(name, "sim-common-mode") == 0) {
        char mode[16];
        int used = 0;
        if (sscanf(value, "%15[a-z]:%n", mode, &used) != 1 || used == 0 ||
            cc_common_mode_parse(mode, &o->sim_common_mode, NULL) != CC_OK ||
            !parse_real(value + used, &o->sim_common_mode_rms) ||
            !(o->sim_common_mode_rms >= 0) || !isfinite(o->sim_common_mode_rms))
            return bad_option(name, value,
                              "MODE:RMS, MODE none, supercolumn, row or "
                              "half, RMS >= 0 ADU");
    } else if (strcmp(name, "gain-map") == 0) {
        o->gain_map = value;
    } else if (strcmp(name, "gain-unit") == 0) {
        if (cc_gain_unit_parse(value, &o->gain_unit, NULL) != CC_OK)
            return bad_option(name, value, "relative or adu-per-kev");
    } else if (strcmp(name, "gain-calibrate") == 0) {
        o->gain_calibrate = value;
    } else if (strcmp(name, "gain-mask") == 0) {
        o->gain_mask = value;
    } else if (strcmp(name, "gain-events") == 0) {
        static const char *const events[] = {"single", "sum"};
        if ((index = choose(value, events, 2)) < 0)
            return bad_option(name, value, "single or sum");
        o->gain_events = (cc_gain_events)index;
    } else if (strcmp(name, "gain-min-photons") == 0) {
        uint64_t n;
        if (!parse_unsigned(value, 1, 1000000, &n))
            return bad_option(name, value, "a number of photons, 1..1000000");
        o->gain_min_photons = (uint32_t)n;
    } else if (strcmp(name, "gain-line-energy") == 0) {
        if (!parse_real(value, &o->gain_line_energy) ||
            !(o->gain_line_energy > 0))
            return bad_option(name, value, "a line energy above 0 keV");
    } else if (strcmp(name, "sim-gain-spread") == 0) {
        if (!parse_real(value, &o->sim_gain_spread) ||
            !(o->sim_gain_spread >= 0 && o->sim_gain_spread <= 0.2))
            return bad_option(name, value, "a spread in [0, 0.2]");
    } else if (strcmp(name, "sim-noise") == 0) {
        if (!parse_window(value, &o->sim_noise_min, &o->sim_noise_max) ||
            !(o->sim_noise_min >= 0))
            return bad_option(name, value, "LO:HI in ADU, 0 <= LO < HI");
    } else if (strcmp(name, "sim-gain-map") == 0) {
        o->sim_gain_map = value;
    } else if (strcmp(name, "mask") == 0) {
        o->mask = value;
    } else if (strcmp(name, "auto-mask") == 0) {
        if (!parse_real(value, &o->auto_mask) ||
            !(o->auto_mask == 0 || o->auto_mask >= 1))
            return bad_option(name, value, "0 (off) or a factor of at least 1");
    } else if (strcmp(name, "peak-range") == 0) {
        if (!parse_window(value, &o->peak_low, &o->peak_high))
            return bad_option(name, value, "give LO:HI in ADU with LO < HI");
    } else if (strcmp(name, "energy-window") == 0) {
        if (!parse_window(value, &o->window_low, &o->window_high))
            return bad_option(name, value, "give LO:HI in ADU with LO < HI");
        o->windowed = true;
    } else if (strcmp(name, "eta") == 0) {
        if ((index = choose(value, etas, 3)) < 0)
            return bad_option(name, value, "eta2, eta2full or eta3");
        o->eta = (cc_eta_function)index;
        o->eta_given = true;
    } else if (strcmp(name, "eta-bins") == 0) {
        if (!parse_unsigned(value, 1, CC_ETA_BINS_MAX, &number))
            return bad_option(name, value, "1..1000 bins");
        o->eta_bins = (uint32_t)number;
        o->eta_bins_given = true;
    } else if (strcmp(name, "eta-calibrate") == 0) {
        o->eta_calibrate = value;
    } else if (strcmp(name, "eta-map") == 0) {
        o->eta_map = value;
    } else if (strcmp(name, "subpixels") == 0) {
        if (!parse_unsigned(value, 1, CC_SUBPIXELS_MAX, &number))
            return bad_option(name, value, "1..25 sub-pixels");
        o->subpixels = (uint32_t)number;
    } else if (strcmp(name, "image") == 0) {
        o->image = value;
    } else if (strcmp(name, "counts") == 0) {
        o->counts = value;
    } else if (strcmp(name, "photons") == 0) {
        o->photons = value;
    }
    return 0;
}

/* Checks the options together. */
static int check(const struct options *o)
{
    if (o->simulate != 0 && (o->pedestal != NULL || o->data != NULL)) {
        fprintf(stderr, "clusterfind: --simulate makes its own runs; leave "
                        "out --pedestal and --data\n");
        return EXIT_USAGE;
    }
    if (o->simulate == 0 && (o->pedestal == NULL || o->data == NULL)) {
        fprintf(stderr, "clusterfind: give --pedestal DARK_master_0.json and "
                        "--data RUN_master_0.json, or --simulate FRAMES "
                        "(see clusterfind --help)\n");
        return EXIT_USAGE;
    }
    if (o->simulate != 0 && o->chip != CC_RAW_CHIP_UNSAID) {
        fprintf(stderr, "clusterfind: --chip names the chip of raw runs; "
                        "--simulate makes its own\n");
        return EXIT_USAGE;
    }
    bool simulation_only = o->flux >= 0 || o->pattern != CC_PATTERN_NONE ||
                           o->hot_pixels > 0 || o->dead_pixels > 0 ||
                           o->sim_common_mode != CC_COMMON_MODE_NONE ||
                           o->sim_gain_spread > 0 || o->sim_gain_map != NULL ||
                           o->sim_noise_max > 0;
    if (o->simulate == 0 && simulation_only) {
        fprintf(stderr, "clusterfind: --flux, --pattern, --hot-pixels, "
                        "--dead-pixels and --sim-* "
                        "shape a simulated run: give --simulate FRAMES\n");
        return EXIT_USAGE;
    }
    if ((o->gain_mask != NULL || o->gain_line_energy > 0 ||
         o->gain_events != CC_GAIN_EVENTS_SINGLE ||
         o->gain_min_photons != GAIN_MIN_PHOTONS) &&
        o->gain_calibrate == NULL) {
        fprintf(stderr, "clusterfind: --gain-events, --gain-min-photons, "
                        "--gain-line-energy and --gain-mask shape a "
                        "calibration: give --gain-calibrate OUT.npy\n");
        return EXIT_USAGE;
    }
    if (o->gain_calibrate != NULL && !(o->peak_low < o->peak_high)) {
        fprintf(stderr, "clusterfind: --gain-calibrate fits each pixel's "
                        "line: give --peak-range LO:HI around the flat "
                        "field's line\n");
        return EXIT_USAGE;
    }
    if (o->gain_unit != CC_GAIN_RELATIVE && o->gain_map == NULL) {
        fprintf(stderr, "clusterfind: --gain-unit is the unit of a map: "
                        "give --gain-map FILE\n");
        return EXIT_USAGE;
    }
    if ((o->image != NULL || o->photons != NULL) && o->eta_map == NULL) {
        fprintf(stderr, "clusterfind: --image and --photons place photons "
                        "with a calibration: give --eta-map IN.eta (make one "
                        "from a flat-field run with --eta-calibrate)\n");
        return EXIT_USAGE;
    }
    if (!(o->min < o->max)) {
        fprintf(stderr, "clusterfind: --min %g must be below --max %g\n",
                o->min, o->max);
        return EXIT_USAGE;
    }
    return 0;
}

/* With a map in ADU per keV, clusters are in eV (docs/spec.md §9.2):
 * the energies given in keV become eV, and the spectrum's default range
 * is [0, 20) keV. */
static void in_cluster_units(struct options *o)
{
    bool kev = o->gain_map != NULL && o->gain_unit == CC_GAIN_ADU_PER_KEV;
    o->energy_unit = kev ? "keV" : "ADU";
    o->energy_scale = kev ? 1000 : 1;
    if (kev && !o->range_given) {
        o->min = 0;
        o->max = 20;
    }
    double *energies[] = {&o->min,       &o->max,        &o->peak_low,
                          &o->peak_high, &o->window_low, &o->window_high};
    for (int i = 0; i < 6; i++)
        *energies[i] *= o->energy_scale;
}

int main(int argc, char **argv)
{
    struct options options = {.size_x = 3,
                              .size_y = 3,
                              .nsigma = 5,
                              .pedestal_frames = 1000,
                              .energy = CC_ENERGY_SUM,
                              .bins = 400,
                              .min = 0,
                              .max = 2000,
                              .backend = CC_BACKEND_AUTO,
                              .precision = CC_PRECISION_FLOAT,
                              .threads = 0,
                              .adc_mask = 0x3FFF,
                              .simulate = 0,
                              .seed = 1,
                              .eta = CC_ETA2,
                              .eta_bins = 100,
                              .subpixels = 5,
                              .flux = -1,
                              .pattern = CC_PATTERN_NONE,
                              .pattern_period = 1,
                              .gain_min_photons = GAIN_MIN_PHOTONS};
    static const struct option long_options[] = {
        {"pedestal", required_argument, NULL, 0},
        {"data", required_argument, NULL, 0},
        {"output", required_argument, NULL, 0},
        {"spectrum", required_argument, NULL, 0},
        {"hitmap", required_argument, NULL, 0},
        {"noise", required_argument, NULL, 0},
        {"analog", required_argument, NULL, 0},
        {"chip", required_argument, NULL, 0},
        {"cluster-size", required_argument, NULL, 0},
        {"nsigma", required_argument, NULL, 0},
        {"pedestal-frames", required_argument, NULL, 0},
        {"energy", required_argument, NULL, 0},
        {"bins", required_argument, NULL, 0},
        {"min", required_argument, NULL, 0},
        {"max", required_argument, NULL, 0},
        {"backend", required_argument, NULL, 0},
        {"precision", required_argument, NULL, 0},
        {"threads", required_argument, NULL, 0},
        {"adc-mask", required_argument, NULL, 0},
        {"simulate", required_argument, NULL, 0},
        {"seed", required_argument, NULL, 0},
        {"flux", required_argument, NULL, 0},
        {"pattern", required_argument, NULL, 0},
        {"pattern-period", required_argument, NULL, 0},
        {"hot-pixels", required_argument, NULL, 0},
        {"common-mode", required_argument, NULL, 0},
        {"sim-common-mode", required_argument, NULL, 0},
        {"gain-map", required_argument, NULL, 0},
        {"gain-unit", required_argument, NULL, 0},
        {"gain-calibrate", required_argument, NULL, 0},
        {"gain-mask", required_argument, NULL, 0},
        {"gain-events", required_argument, NULL, 0},
        {"gain-line-energy", required_argument, NULL, 0},
        {"gain-min-photons", required_argument, NULL, 0},
        {"sim-gain-spread", required_argument, NULL, 0},
        {"sim-gain-map", required_argument, NULL, 0},
        {"sim-noise", required_argument, NULL, 0},
        {"dead-pixels", required_argument, NULL, 0},
        {"mask", required_argument, NULL, 0},
        {"auto-mask", required_argument, NULL, 0},
        {"energy-window", required_argument, NULL, 0},
        {"peak-range", required_argument, NULL, 0},
        {"eta", required_argument, NULL, 0},
        {"eta-bins", required_argument, NULL, 0},
        {"eta-calibrate", required_argument, NULL, 0},
        {"eta-map", required_argument, NULL, 0},
        {"subpixels", required_argument, NULL, 0},
        {"image", required_argument, NULL, 0},
        {"counts", required_argument, NULL, 0},
        {"photons", required_argument, NULL, 0},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0}};
    int opt, index;
    while ((opt = getopt_long(argc, argv, "", long_options, &index)) != -1) {
        if (opt == 'h') {
            usage(stdout);
            return EXIT_SUCCESS;
        }
        if (opt == 'V') {
            printf("clusterfind (libclustercore) %s\n", cc_version());
            return EXIT_SUCCESS;
        }
        if (opt != 0) {
            usage(stderr);
            return EXIT_USAGE;
        }
        int status = apply(&options, long_options[index].name, optarg);
        if (status != 0)
            return status;
    }
    if (optind < argc) {
        fprintf(stderr,
                "clusterfind: unexpected argument '%s' (see "
                "clusterfind --help)\n",
                argv[optind]);
        return EXIT_USAGE;
    }
    int status = check(&options);
    if (status != 0)
        return status;
    in_cluster_units(&options);
    return clusterfind_run(&options);
}
