/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * clusterfind_imaging.c: the imaging half of clusterfind (docs/spec.md
 * §7): the photons of the energy window go into an η calibration
 * (--eta-calibrate), into the image interpolated with a calibration read
 * from file (--eta-map, --image), the counting image (--counts) and the
 * photon list (--photons).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clusterfind.h"

static const char *const eta_names[] = {"eta2", "eta2full", "eta3"};

static int fail(const char *what, const char *message)
{
    fprintf(stderr, "clusterfind: %s%s\n", what, message);
    return EXIT_RUN_FAILED;
}

/* The calibration to image with, which must be of the function and bins
 * asked for, if they were. */
static int read_map(struct imaging *imaging, uint32_t rows, uint32_t cols)
{
    const struct options *o = imaging->options;
    char message[CC_MESSAGE_SIZE];
    cc_eta_calibration *map;
    if (cc_eta_calibration_read(&map, o->eta_map, message) != CC_OK)
        return fail("", message);
    cc_eta_calibration_info info;
    cc_eta_calibration_info_get(map, &info);
    int status = 0;
    if ((o->eta_given && info.function != o->eta) ||
        (o->eta_bins_given && info.bins != o->eta_bins)) {
        fprintf(stderr,
                "clusterfind: %s is a calibration of %s with %u bins; "
                "--eta %s --eta-bins %u do not match it (leave them out to "
                "take the file's)\n",
                o->eta_map, eta_names[info.function], (unsigned)info.bins,
                eta_names[o->eta], (unsigned)o->eta_bins);
        status = EXIT_USAGE;
    }
    if (status == 0 && info.photons == 0)
        fprintf(stderr,
                "clusterfind: %s holds no photons: positions are "
                "the raw eta\n",
                o->eta_map);
    if (status == 0 &&
        cc_interpolator_new(&imaging->interpolator, map,
                            o->windowed ? &imaging->window : NULL, rows, cols,
                            o->subpixels, message) != CC_OK)
        status = fail("", message);
    cc_eta_calibration_destroy(map);
    return status;
}

int imaging_open(struct imaging *imaging, const struct options *options,
                 uint32_t rows, uint32_t cols)
{
    *imaging = (struct imaging){.options = options};
    const struct options *o = options;
    imaging->window = (cc_energy_window){o->energy, o->window_low,
                                         o->window_high};
    const cc_energy_window *window = o->windowed ? &imaging->window : NULL;
    char message[CC_MESSAGE_SIZE];
    if (o->eta_map != NULL) {
        int status = read_map(imaging, rows, cols);
        if (status != 0)
            return status;
    }
    if (o->eta_calibrate != NULL &&
        cc_eta_calibration_new(&imaging->calibration, o->eta, o->eta_bins,
                               window, message) != CC_OK)
        return fail("", message);
    if (o->counts != NULL &&
        (cc_hitmap_new(&imaging->counts, rows, cols) != CC_OK ||
         cc_hitmap_set_window(imaging->counts, window) != CC_OK))
        return fail("", "no memory for the counting image");
    if (o->photons != NULL &&
        cc_photon_writer_new(&imaging->photons, o->photons, message) != CC_OK)
        return fail("", message);
    return 0;
}

/* The photon records of one frame, from its positions. */
static int write_photons(struct imaging *imaging,
                         const cc_frame_clusters *frame)
{
    const struct options *o = imaging->options;
    const size_t cells = (size_t)frame->size_x * frame->size_y;
    size_t n = 0;
    for (uint32_t i = 0; i < frame->count; i++) {
        const cc_position *at = &imaging->positions[i];
        if (at->status == CC_POSITION_OUTSIDE_WINDOW)
            continue;
        imaging->records[n++] = (cc_photon_record){
            frame->frame_number, at->x, at->y,
            (double)cc_cluster_energy(o->energy, frame->size_x, frame->size_y,
                                      frame->values + i * cells)};
    }
    char message[CC_MESSAGE_SIZE];
    if (cc_photon_writer_write(imaging->photons, imaging->records, n,
                               message) != CC_OK)
        return fail("", message);
    return 0;
}

/* Room for the positions and records of a frame of count clusters. */
static int reserve(struct imaging *imaging, uint32_t count)
{
    if (count <= imaging->capacity)
        return 0;
    cc_position *positions = realloc(imaging->positions,
                                     count * sizeof *positions);
    if (positions != NULL)
        imaging->positions = positions;
    cc_photon_record *records = realloc(imaging->records,
                                        count * sizeof *records);
    if (records != NULL)
        imaging->records = records;
    if (positions == NULL || records == NULL)
        return fail("", "out of memory");
    imaging->capacity = count;
    return 0;
}

int imaging_add(struct imaging *imaging, const cc_clusters *clusters)
{
    const struct options *o = imaging->options;
    if (imaging->counts != NULL)
        cc_hitmap_add(imaging->counts, clusters);
    if (imaging->calibration != NULL)
        cc_eta_calibration_add(imaging->calibration, clusters);
    if (imaging->interpolator != NULL)
        cc_interpolator_add(imaging->interpolator, clusters);
    for (size_t k = 0; k < cc_clusters_frame_count(clusters); k++) {
        cc_frame_clusters frame;
        cc_clusters_frame(clusters, k, &frame);
        const size_t cells = (size_t)frame.size_x * frame.size_y;
        for (uint32_t i = 0; o->windowed && i < frame.count; i++)
            imaging->outside += !cc_energy_window_contains(&imaging->window,
                                                           frame.size_x,
                                                           frame.size_y,
                                                           frame.values +
                                                               i * cells);
        imaging->clusters += frame.count;
        if (imaging->photons == NULL)
            continue;
        int status = reserve(imaging, frame.count);
        if (status == 0)
            cc_interpolator_positions(imaging->interpolator, &frame,
                                      imaging->positions);
        if (status == 0)
            status = write_photons(imaging, &frame);
        if (status != 0)
            return status;
    }
    return 0;
}

int imaging_write(struct imaging *imaging, const char **written, int *n_written,
                  char *message)
{
    const struct options *o = imaging->options;
    int rc = CC_OK;
    if (o->eta_calibrate != NULL) {
        rc = cc_eta_calibration_save(imaging->calibration, o->eta_calibrate,
                                     message);
        if (rc == CC_OK)
            written[(*n_written)++] = o->eta_calibrate;
    }
    if (rc == CC_OK && o->image != NULL) {
        rc = cc_interpolator_write_npy(imaging->interpolator, o->image,
                                       message);
        if (rc == CC_OK)
            written[(*n_written)++] = o->image;
    }
    if (rc == CC_OK && o->counts != NULL) {
        rc = cc_hitmap_write_npy(imaging->counts, o->counts, message);
        if (rc == CC_OK)
            written[(*n_written)++] = o->counts;
    }
    if (rc == CC_OK && o->photons != NULL) {
        rc = cc_photon_writer_finish(imaging->photons, message);
        if (rc == CC_OK)
            written[(*n_written)++] = o->photons;
    }
    return rc;
}

void imaging_summary(const struct imaging *imaging)
{
    const struct options *o = imaging->options;
    const char *energy = o->energy == CC_ENERGY_SUM ? "sum" : "sum2x2";
    uint64_t photons = imaging->clusters - imaging->outside;
    if (o->windowed)
        printf("photons:   %" PRIu64 " in [%g, %g) %s (%s), %" PRIu64
               " clusters outside\n",
               photons, o->window_low / o->energy_scale,
               o->window_high / o->energy_scale, o->energy_unit, energy,
               imaging->outside);
    if (imaging->calibration != NULL) {
        cc_eta_calibration_info info;
        cc_eta_calibration_info_get(imaging->calibration, &info);
        printf("eta:       %s calibration of %" PRIu64 " photons in %u x %u "
               "bins, %" PRIu64 " uninterpolable left out\n",
               eta_names[info.function], info.photons, (unsigned)info.bins,
               (unsigned)info.bins, info.uninterpolable);
    }
    if (imaging->interpolator != NULL) {
        cc_image_stats stats;
        cc_interpolator_stats(imaging->interpolator, &stats);
        printf("image:     %" PRIu64 " photons imaged at %u x %u sub-pixels "
               "(%" PRIu64 " uninterpolable at their pixel's middle, %" PRIu64
               " clipped at the edge)\n",
               stats.photons, (unsigned)o->subpixels, (unsigned)o->subpixels,
               stats.uninterpolable, stats.clipped);
    }
}

void imaging_close(struct imaging *imaging)
{
    cc_eta_calibration_destroy(imaging->calibration);
    cc_interpolator_destroy(imaging->interpolator);
    cc_hitmap_destroy(imaging->counts);
    cc_photon_writer_destroy(imaging->photons); /* removes an unfinished file */
    free(imaging->positions);
    free(imaging->records);
}
