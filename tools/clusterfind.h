/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterfind.h: what the parts of the clusterfind program share: its
 * options, the sources of frames (a raw run or the simulator) and the run.
 */
#ifndef CLUSTERFIND_H
#define CLUSTERFIND_H

#include <stdbool.h>
#include <stdint.h>

#include "clustercore.h"

/* Exit statuses. A damaged input (a missing or truncated data file, a
 * padded frame) still gives complete outputs of every complete frame, but
 * not status 0: scripts must notice. */
enum { EXIT_RUN_FAILED = 1, EXIT_USAGE = 2, EXIT_INPUT_DAMAGED = 3 };

/* --gain-min-photons's default: the library's (cc_gain_calibration_config). */
enum { GAIN_MIN_PHOTONS = 50 };

struct options {
    const char *pedestal; /* master file of the dark run */
    const char *data;     /* master file of the data run */
    const char *output;   /* .clust */
    const char *spectrum; /* .csv */
    const char *hitmap;   /* .npy */
    const char *noise;    /* .npy of the pedestal's rms after training */
    const char *analog;   /* .npy of the data frames' values summed */
    uint32_t size_x, size_y;
    double nsigma;
    uint32_t pedestal_frames;
    cc_energy energy;
    uint32_t bins;
    double min, max;
    double peak_low, peak_high; /* the range of the line fit; low >= high:
                                   around the highest bin */
    cc_backend backend;
    cc_precision precision;
    uint32_t threads;
    uint16_t adc_mask;
    cc_common_mode common_mode; /* the finder's correction (docs/spec.md §8) */
    const char *gain_map;       /* .npy or TIFF of per-pixel gains (§9) */
    cc_gain_unit gain_unit;
    const char *gain_calibrate; /* .npy of the map this flat field gives */
    const char *gain_mask;      /* .npy of the pixels it could not calibrate */
    cc_gain_events gain_events;
    uint32_t gain_min_photons; /* fewer in a pixel's line: flagged */
    double gain_line_energy;   /* keV: a map in ADU per keV; 0: relative */
    /* Energies on the command line and in the summary are in energy_unit,
     * energy_scale cluster units each: ADU (1), or keV with a map in ADU
     * per keV, whose clusters are in eV (1000). */
    const char *energy_unit;
    double energy_scale;
    bool range_given;  /* --min or --max */
    cc_raw_chip chip;  /* of chip test board runs (docs/spec.md §5.2) */
    uint64_t simulate; /* data frames to simulate; 0 = read files */
    uint64_t seed;
    /* imaging (docs/spec.md §7) */
    const char *mask; /* .npy of bad pixels */
    double auto_mask; /* the rms rule's k; 0 = off */
    bool windowed;    /* an energy window on `energy` */
    double window_low, window_high;
    cc_eta_function eta;
    bool eta_given;
    uint32_t eta_bins;
    bool eta_bins_given;
    const char *eta_calibrate; /* .eta to write */
    const char *eta_map;       /* .eta to read */
    uint32_t subpixels;
    const char *image, *counts, *photons; /* .npy outputs */
    /* the simulated runs */
    double flux; /* photons per frame; < 0: the default */
    cc_sim_pattern pattern;
    double pattern_period;
    uint32_t hot_pixels, dead_pixels;
    cc_common_mode sim_common_mode; /* the simulated run's common mode */
    double sim_common_mode_rms;
    double sim_gain_spread;              /* the simulated pixels' gain rms */
    double sim_noise_min, sim_noise_max; /* ADU; max 0: the default */
    const char *sim_gain_map;            /* .npy of the simulated gains */
};

/* The imaging of a run: the photons in the window, the η calibration it
 * makes, the interpolated image from a calibration it reads, the counting
 * image and the photon list (clusterfind_imaging.c). */
struct imaging {
    const struct options *options;
    cc_energy_window window;
    cc_eta_calibration *calibration; /* --eta-calibrate */
    cc_interpolator *interpolator;   /* --eta-map */
    cc_hitmap *counts;               /* --counts */
    cc_photon_writer *photons;       /* --photons */
    cc_position *positions;
    cc_photon_record *records;
    size_t capacity;            /* of positions and records */
    uint64_t clusters, outside; /* seen, and of them outside the window */
};

/* Reads the calibration to image with and opens the outputs; 0 or an exit
 * status, having said why. */
int imaging_open(struct imaging *imaging, const struct options *options,
                 uint32_t rows, uint32_t cols);
int imaging_add(struct imaging *imaging, const cc_clusters *clusters);
/* Writes the outputs of the run; each path written is appended to
 * written[*n_written], so that a later failure can remove them. */
int imaging_write(struct imaging *imaging, const char **written, int *n_written,
                  char *message);
void imaging_summary(const struct imaging *imaging);
void imaging_close(struct imaging *imaging);

/* The gain of a run: the map in force, and the calibration of a flat
 * field when asked for (clusterfind_gain.c). */
struct gain_job {
    const struct options *options;
    uint32_t rows, cols;
    cc_gain_calibration *calibration; /* --gain-calibrate */
    cc_gain_calibration_result result;
};

/* 0 or an exit status, having said why. With --gain-calibrate the finder
 * enters its clusters into the flat field's spectra (on the GPU when it
 * runs there). */
int gain_open(struct gain_job *gain, const struct options *options,
              cc_finder *finder, uint32_t rows, uint32_t cols);
/* Takes the spectra from the finder, solves the calibration under its
 * map and writes the new map (and the mask of the pixels it could not
 * calibrate); each path written is appended to written. */
int gain_write(struct gain_job *gain, cc_finder *finder, const char **written,
               int *n_written, char *message);
void gain_summary(const struct gain_job *gain, const cc_finder *finder);
void gain_close(struct gain_job *gain);

/* A source of frames: a raw run, or the simulator's dark or data frames. */
struct source {
    const char *name;        /* for messages */
    cc_raw_reader *reader;   /* a raw run, or NULL */
    cc_simulator *simulator; /* the simulator, or NULL */
    bool dark;               /* simulated dark frames */
    uint64_t next, total;    /* simulated frames made so far, and all */
    uint32_t rows, cols;
    uint64_t frames_expected; /* for the progress line */
    cc_raw_layout layout;     /* of a raw run; rows when simulated */
};

/* chip: the chip of a chip test board run, which its master does not say. */
int source_open_raw(struct source *source, const char *master_path,
                    cc_raw_chip chip);
void source_open_simulated(struct source *source, cc_simulator *simulator,
                           bool dark, uint64_t frames);
void source_close(struct source *source);
/* Reads up to max_frames; *n_read 0 at the end. truth (simulated data
 * only) receives the photons. Prints the reader's notices on stderr. */
int source_read(struct source *source, uint16_t *frames, uint64_t *numbers,
                size_t max_frames, size_t *n_read, cc_truth *truth);

/* Runs the whole job and returns the exit status. */
int clusterfind_run(const struct options *options);

#endif
