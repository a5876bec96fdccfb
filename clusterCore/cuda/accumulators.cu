/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * accumulators.cu: what the GPU keeps across batches until the host takes
 * it (docs/cuda.md): the interpolated image, a flat field's per-pixel
 * spectra, the spectrum and hit map, the analog image. Each is replaced
 * whole (set: the one in force stays if the new one cannot be made),
 * added to by every batch's chunks (enqueue), and taken: copied out and
 * emptied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

/* Allocates a tally of n counts and n_totals totals, all zero. */
static int make_tally(struct device_tally *tally, size_t n, size_t n_totals,
                      const char *what, char *message)
{
    tally->n = n;
    tally->n_totals = n_totals;
    CUDA_TRY(cudaMalloc(&tally->counts, n * sizeof(unsigned long long)), what);
    CUDA_TRY(cudaMalloc(&tally->totals, n_totals * sizeof(unsigned long long)),
             what);
    CUDA_TRY(cudaMemset(tally->counts, 0, n * sizeof(unsigned long long)),
             what);
    CUDA_TRY(cudaMemset(tally->totals, 0,
                        n_totals * sizeof(unsigned long long)),
             what);
    return CC_OK;
}

static void free_tally(struct device_tally *tally)
{
    cudaFree(tally->counts);
    cudaFree(tally->totals);
}

/* Empties a tally, as far as the device still can. */
static void clear_tally(struct device_tally *tally)
{
    cudaMemset(tally->counts, 0, tally->n * sizeof(unsigned long long));
    cudaMemset(tally->totals, 0, tally->n_totals * sizeof(unsigned long long));
}

/* Copies a tally's counts and totals to the host and empties it. */
static int take_tally(struct device_tally *tally, uint64_t *counts,
                      unsigned long long *totals, const char *what,
                      char *message)
{
    CUDA_TRY(cudaMemcpy(counts, tally->counts,
                        tally->n * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost),
             what);
    CUDA_TRY(cudaMemcpy(totals, tally->totals,
                        tally->n_totals * sizeof(unsigned long long),
                        cudaMemcpyDeviceToHost),
             what);
    CUDA_TRY(cudaMemset(tally->counts, 0,
                        tally->n * sizeof(unsigned long long)),
             what);
    CUDA_TRY(cudaMemset(tally->totals, 0,
                        tally->n_totals * sizeof(unsigned long long)),
             what);
    /* A memset of device memory may return before it is done, on the
     * legacy stream, which the batches' non-blocking streams do not wait
     * for: the next batch's kernels must find the tally empty. */
    CUDA_TRY(cudaDeviceSynchronize(), what);
    return CC_OK;
}

/* After a failed batch, part of which may be in the image, spectra and
 * counts: they are emptied rather than left holding part of a batch, and
 * message says so. */
int cc__cuda_drop_accumulated(struct cc__cuda *cuda, int rc, char *message)
{
    if (!accumulating(cuda))
        return rc;
    cudaDeviceSynchronize();
    if (cuda->imaging != NULL)
        clear_tally(&cuda->imaging->image);
    if (cuda->spectra != NULL)
        clear_tally(&cuda->spectra->spectra);
    if (cuda->counting != NULL)
        clear_tally(&cuda->counting->counts);
    cudaDeviceSynchronize(); /* as far as the device still can */
    char failure[CC_MESSAGE_SIZE];
    cc__message(failure, CC_OK, "%s", message);
    return cc__message(message, rc,
                       "%s; what the GPU added since the last take to%s%s%s "
                       "is dropped",
                       failure, cuda->imaging != NULL ? " the image" : "",
                       cuda->spectra != NULL ? " the flat field's spectra" : "",
                       cuda->counting != NULL ? " the spectrum and hit map"
                                              : "");
}

static void free_imaging(struct device_imaging *imaging)
{
    if (imaging == NULL)
        return;
    cudaFree(imaging->fx);
    cudaFree(imaging->fy);
    cudaFree(imaging->row_empty);
    cudaFree(imaging->column_empty);
    free_tally(&imaging->image);
    free(imaging);
}

/* A device copy of map's tables and an empty image, or NULL. */
static int make_imaging(const cc__image_map *map, struct device_imaging **made,
                        char *message)
{
    struct device_imaging *imaging = (struct device_imaging *)
        calloc(1, sizeof *imaging);
    if (imaging == NULL)
        return cc__message(message, CC_ENOMEM, "no memory for imaging");
    *made = imaging;
    size_t cells = (size_t)map->bins * map->bins;
    CUDA_TRY(cudaMalloc(&imaging->fx, cells * sizeof(double)),
             "allocating the transport map");
    CUDA_TRY(cudaMalloc(&imaging->fy, cells * sizeof(double)),
             "allocating the transport map");
    CUDA_TRY(cudaMalloc(&imaging->row_empty, map->bins),
             "allocating the transport map");
    CUDA_TRY(cudaMalloc(&imaging->column_empty, map->bins),
             "allocating the transport map");
    CUDA_TRY(cudaMemcpy(imaging->fx, map->fx, cells * sizeof(double),
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    CUDA_TRY(cudaMemcpy(imaging->fy, map->fy, cells * sizeof(double),
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    CUDA_TRY(cudaMemcpy(imaging->row_empty, map->row_empty, map->bins,
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    CUDA_TRY(cudaMemcpy(imaging->column_empty, map->column_empty, map->bins,
                        cudaMemcpyHostToDevice),
             "copying the transport map");
    int rc = make_tally(&imaging->image,
                        (size_t)map->rows * map->subpixels * map->cols *
                            map->subpixels,
                        4, "allocating the image", message);
    if (rc != CC_OK)
        return rc;
    imaging->map = *map;
    imaging->map.fx = imaging->fx;
    imaging->map.fy = imaging->fy;
    imaging->map.row_empty = imaging->row_empty;
    imaging->map.column_empty = imaging->column_empty;
    return CC_OK;
}

int cc__cuda_set_image(struct cc__cuda *cuda, const struct cc__image_map *map,
                       char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    struct device_imaging *made = NULL;
    if (map != NULL) {
        int rc = make_imaging(map, &made, message);
        if (rc != CC_OK) { /* the imaging in force stays */
            free_imaging(made);
            return rc;
        }
    }
    cudaError_t finished = cc__cuda_finish_work(cuda);
    if (finished != cudaSuccess) { /* the imaging in force stays */
        free_imaging(made);
        return cuda_failure(message, "finishing the GPU's work", finished);
    }
    free_imaging(cuda->imaging);
    cuda->imaging = made;
    return CC_OK;
}

int cc__cuda_take_image(struct cc__cuda *cuda, uint64_t *counts,
                        cc_image_stats *stats, char *message)
{
    unsigned long long totals[4];
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    int rc = take_tally(&cuda->imaging->image, counts, totals,
                        "taking the image from the GPU", message);
    if (rc != CC_OK)
        return rc;
    *stats = (cc_image_stats){totals[0], totals[1], totals[2], totals[3]};
    return CC_OK;
}

static void free_spectra(struct device_spectra *spectra)
{
    if (spectra == NULL)
        return;
    free_tally(&spectra->spectra);
    free(spectra);
}

int cc__cuda_set_spectra(struct cc__cuda *cuda,
                         const struct cc__gain_binning *binning, uint32_t rows,
                         uint32_t cols, char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    struct device_spectra *made = NULL;
    if (binning != NULL) {
        made = (struct device_spectra *)calloc(1, sizeof *made);
        if (made == NULL)
            return cc__message(message, CC_ENOMEM, "no memory for spectra");
        made->binning = *binning;
        made->cols = cols;
        int rc = make_tally(&made->spectra, (size_t)rows * cols * binning->bins,
                            2, "allocating the spectra", message);
        if (rc != CC_OK) { /* the spectra in force stay */
            free_spectra(made);
            return rc;
        }
    }
    cudaError_t finished = cc__cuda_finish_work(cuda);
    if (finished != cudaSuccess) { /* the spectra in force stays */
        free_spectra(made);
        return cuda_failure(message, "finishing the GPU's work", finished);
    }
    free_spectra(cuda->spectra);
    cuda->spectra = made;
    return CC_OK;
}

int cc__cuda_take_spectra(struct cc__cuda *cuda, uint64_t *counts,
                          uint64_t *photons, uint64_t *outside, char *message)
{
    unsigned long long totals[2];
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    int rc = take_tally(&cuda->spectra->spectra, counts, totals,
                        "taking the spectra from the GPU", message);
    if (rc != CC_OK)
        return rc;
    *photons = totals[0];
    *outside = totals[1];
    return CC_OK;
}

static void free_counting(struct device_counting *counting)
{
    if (counting == NULL)
        return;
    free_tally(&counting->counts);
    free(counting);
}

/* Bins of the spectrum and pixels of the hit map the GPU keeps. */
static size_t counting_size(const cc__tally_binning *binning)
{
    return (binning->counts_spectrum ? binning->bins : 0) +
           (binning->counts_hitmap ? (size_t)binning->rows * binning->cols : 0);
}

int cc__cuda_set_counting(struct cc__cuda *cuda,
                          const struct cc__tally_binning *binning,
                          char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    struct device_counting *made = NULL;
    if (binning != NULL) {
        made = (struct device_counting *)calloc(1, sizeof *made);
        if (made == NULL)
            return cc__message(message, CC_ENOMEM,
                               "no memory for the spectrum and hit map");
        made->binning = *binning;
        if (!binning->counts_spectrum)
            made->binning.bins = 0; /* the hit map's counts come first */
        int rc = make_tally(&made->counts, counting_size(&made->binning), 3,
                            "allocating the spectrum and hit map", message);
        if (rc != CC_OK) { /* the counting in force stays */
            free_counting(made);
            return rc;
        }
    }
    cudaError_t finished = cc__cuda_finish_work(cuda);
    if (finished != cudaSuccess) { /* the counting in force stays */
        free_counting(made);
        return cuda_failure(message, "finishing the GPU's work", finished);
    }
    free_counting(cuda->counting);
    cuda->counting = made;
    return CC_OK;
}

int cc__cuda_take_counting(struct cc__cuda *cuda, uint64_t *counts,
                           uint64_t totals[3], char *message)
{
    unsigned long long taken[3];
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    int rc = take_tally(&cuda->counting->counts, counts, taken,
                        "taking the spectrum and hit map from the GPU",
                        message);
    for (int k = 0; rc == CC_OK && k < 3; k++)
        totals[k] = taken[k];
    return rc;
}

int cc__cuda_set_analog(struct cc__cuda *cuda, bool on, char *message)
{
    REFUSE_IF_LOST(cuda);
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    size_t bytes = cuda->pixels * sizeof(double);
    double *sums = NULL, *batch = NULL;
    cudaError_t error = cudaSuccess;
    if (on && cuda->analog != NULL)
        return CC_OK; /* summing goes on */
    if (on) {
        error = cudaMalloc(&sums, bytes);
        if (error == cudaSuccess)
            error = cudaMalloc(&batch, bytes);
        if (error == cudaSuccess)
            error = cudaMemset(sums, 0, bytes);
    }
    const char *what = "making the analog image";
    /* No batch adds into what goes; and the memset runs on the legacy
     * stream, which the batches' streams do not wait for. */
    if (error == cudaSuccess) {
        what = "finishing the GPU's work";
        error = cc__cuda_finish_work(cuda);
    }
    if (error != cudaSuccess) { /* the analog image in force stays */
        cudaFree(sums);
        cudaFree(batch);
        return cuda_failure(message, what, error);
    }
    cudaFree(cuda->analog);
    cudaFree(cuda->analog_batch);
    cuda->analog = sums;
    cuda->analog_batch = batch;
    return CC_OK;
}

int cc__cuda_take_analog(struct cc__cuda *cuda, double *sums, char *message)
{
    REFUSE_IF_LOST(cuda);
    if (cuda->analog == NULL)
        return CC_OK;
    CUDA_TRY(cudaSetDevice(cuda->device), "choosing the device");
    size_t bytes = cuda->pixels * sizeof(double);
    double *taken = (double *)malloc(bytes);
    if (taken == NULL)
        return cc__message(message, CC_ENOMEM,
                           "no memory to take the GPU's analog image");
    cudaError_t error = cudaMemcpy(taken, cuda->analog, bytes,
                                   cudaMemcpyDeviceToHost);
    if (error == cudaSuccess)
        error = cudaMemset(cuda->analog, 0, bytes);
    if (error == cudaSuccess)
        error = cudaDeviceSynchronize();
    if (error == cudaSuccess)
        for (size_t p = 0; p < cuda->pixels; p++)
            sums[p] += taken[p];
    free(taken);
    return error == cudaSuccess
               ? CC_OK
               : cuda_failure(message, "taking the analog image", error);
}

/* Images a chunk's photons, enters them into the flat field's spectra
 * and counts them into the spectrum and hit map after its extraction,
 * unless an earlier run of the batch did. */
int cc__cuda_enqueue_accumulators(struct cc__cuda *cuda, struct slot *slot,
                                  size_t chunk, uint32_t size_x,
                                  uint32_t size_y, char *message)
{
    if (cuda->chunk_entered[chunk])
        return CC_OK;
    const cc__chunk_clusters clusters = {size_x,
                                         size_y,
                                         slot->cluster_x,
                                         slot->cluster_y,
                                         slot->cluster_values,
                                         cuda->device_totals + chunk,
                                         slot->cluster_capacity};
    if (cuda->imaging != NULL)
        CUDA_TRY(cc__launch_image(cuda->imaging->map, clusters,
                                  cuda->imaging->image.counts,
                                  cuda->imaging->image.totals, cuda->output),
                 "launching the image kernel");
    if (cuda->spectra != NULL)
        CUDA_TRY(cc__launch_spectra(cuda->spectra->binning, cuda->spectra->cols,
                                    clusters, cuda->spectra->spectra.counts,
                                    cuda->spectra->spectra.totals,
                                    cuda->output),
                 "launching the spectra kernel");
    if (cuda->counting != NULL) {
        struct device_tally *counts = &cuda->counting->counts;
        CUDA_TRY(cc__launch_count(cuda->counting->binning, clusters,
                                  counts->counts,
                                  counts->counts + cuda->counting->binning.bins,
                                  counts->totals, cuda->output),
                 "launching the count kernel");
    }
    return CC_OK;
}

void cc__cuda_free_accumulators(struct cc__cuda *cuda)
{
    free_imaging(cuda->imaging);
    free_spectra(cuda->spectra);
    free_counting(cuda->counting);
    cudaFree(cuda->analog);
    cudaFree(cuda->analog_batch);
}
