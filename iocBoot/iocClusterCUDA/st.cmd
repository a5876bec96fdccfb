# SPDX-License-Identifier: BSD-3-Clause
# st.cmd: the example IOC. A simulated MÖNCH frame source feeds
# NDPluginClusterCUDA; NDFileHDF5 writes the clusters of every frame;
# NDPluginStats watches the raw frames; NDStdArrays serves the hit map,
# the pedestal maps and the interpolated image; autosave, when the IOC is
# built with it, keeps the settings.
# Start it with build/ioc/run-iocClusterCUDA (it runs in build/ioc, where
# envPaths says where everything is). PREFIX (default CC:) names the PVs.

< envPaths
epicsEnvSet("PREFIX", "$(PREFIX=CC:)")
epicsEnvSet("EPICS_DB_INCLUDE_PATH", "$(ADCORE)/db:$(CLUSTER_TOP)/db")
# Frames are 400 x 400 uint16 (320 KB); the pools hold a few hundred.
# The interpolated image is up to 2000 x 2000 uint32 (16 MB) for viewers.
epicsEnvSet("EPICS_CA_MAX_ARRAY_BYTES", "20000000")

dbLoadDatabase("$(CLUSTER_BUILD)/ioc/iocClusterCUDA.dbd")
iocClusterCUDA_registerRecordDeviceDriver(pdbbase)

# Every NDArray pool allocates its frame buffers page-locked, so that the
# CUDA backend copies frames to the GPU straight from the source's arrays
# (48 us a frame from pageable memory on the H200, 8.5 us page-locked).
# Pools keep the buffers they allocate, so this comes before the first
# array is allocated: here, before the drivers and plugins. Without a GPU
# the buffers are ordinary memory, at no cost, so it is always called;
# PINNED_ARRAYS=0 in the environment turns it off for comparisons.
NDClusterCUDAPinnedArrays($(PINNED_ARRAYS=1))

# The records that change with every array (ArrayCounter_RBV, UniqueId_RBV,
# TimeStamp_RBV, QueueFree, NumQueuedArrays, NumImagesCounter_RBV) are
# processed at every change by default (ADCore's SCANRATE, "I/O Intr"):
# each array then wakes the callback, scanOnce and CA link threads. At
# tens of thousands of frames a second, CLUSTER_SCANRATE=".1 second" has
# them read ten times a second instead (docs/ioc.md).
epicsEnvSet("SCANRATE", "$(CLUSTER_SCANRATE=I/O Intr)")

# The frame source: simulated frames (or a raw run replayed).
ADMoenchSimConfig("MOENCH", 400, 400, 0, 0, 0, 0)
dbLoadRecords("ADMoenchSim.template", "P=$(PREFIX),R=cam1:,PORT=MOENCH,ADDR=0,TIMEOUT=1,SCANRATE=$(SCANRATE)")

# The cluster finder. One thread gathers the arrays, one finds their
# clusters, in order, since the pedestal is one ordered sequence, and
# counts them into the spectrum and hit map (on the GPU where it runs);
# maxThreads (the last argument, CLUSTER_OUTPUT_THREADS, default 6) output
# threads fill and publish the batches' cluster arrays, in order. At 3x3
# and 2,200 clusters a frame each frame takes an output thread about
# 20 us on a lent H100's host: 50,000 frames/s with imaging and both
# corrections held in 5 runs of 5, twice (docs/benchmarks.md); idle ones
# cost nothing. The cluster arrays and images come from the plugin's
# own pool, CLUSTER_MAX_MEMORY bytes at most (default 0: no limit).
NDClusterCUDAConfigure("CLUSTER1", 2000, 0, "MOENCH", 0, 0, $(CLUSTER_MAX_MEMORY=0), 0, 0, $(CLUSTER_OUTPUT_THREADS=6))
dbLoadRecords("NDClusterCUDA.template", "P=$(PREFIX),R=Cluster1:,PORT=CLUSTER1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=MOENCH,SCANRATE=$(SCANRATE)")

# The clusters of every frame to HDF5 (Stream mode), from address 0.
NDFileHDF5Configure("HDF1", 2000, 0, "CLUSTER1", 0)
dbLoadRecords("NDFileHDF5.template", "P=$(PREFIX),R=HDF1:,PORT=HDF1,ADDR=0,TIMEOUT=1,XMLSIZE=2048,NDARRAY_PORT=CLUSTER1")

# Statistics of the raw frames.
NDStatsConfigure("STATS1", 100, 0, "MOENCH", 0, 0, 0, 0, 0, 1)
dbLoadRecords("NDStats.template", "P=$(PREFIX),R=Stats1:,PORT=STATS1,ADDR=0,TIMEOUT=1,HIST_SIZE=256,XSIZE=400,YSIZE=400,NCHANS=256,NDARRAY_PORT=MOENCH,SCANRATE=$(SCANRATE)")
NDTimeSeriesConfigure("STATS1_TS", 100, 0, "STATS1", 1, 23)
dbLoadRecords("NDTimeSeries.template", "P=$(PREFIX),R=Stats1:TS:,PORT=STATS1_TS,ADDR=0,TIMEOUT=1,NDARRAY_PORT=STATS1,NDARRAY_ADDR=1,NCHANS=256,ENABLED=1")

# Processing of the raw frames (the tests use it to offer the finder a
# wrong data type).
NDProcessConfigure("PROC1", 100, 0, "MOENCH", 0, 0, 0, 0, 0, 1)
dbLoadRecords("NDProcess.template", "P=$(PREFIX),R=Proc1:,PORT=PROC1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=MOENCH")

# The hit map (address 1 of the finder) for viewers.
NDStdArraysConfigure("IMAGE1", 3, 0, "CLUSTER1", 1, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=image1:,PORT=IMAGE1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=1,TYPE=Int32,FTVL=LONG,NELEMENTS=160000")

# The interpolated image (address 5: EtaMode Interpolate), for viewers,
# up to Subpixels 5 on 400 x 400 frames.
NDStdArraysConfigure("INTERP1", 3, 0, "CLUSTER1", 5, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=interp1:,PORT=INTERP1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=5,TYPE=Int32,FTVL=LONG,NELEMENTS=4000000")

# The pedestal's mean and noise maps and the bad-pixel mask (addresses 2,
# 3 and 4), for viewers.
NDStdArraysConfigure("PEDESTAL1", 3, 0, "CLUSTER1", 2, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=pedestal1:,PORT=PEDESTAL1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=2,TYPE=Float32,FTVL=FLOAT,NELEMENTS=160000")
NDStdArraysConfigure("NOISE1", 3, 0, "CLUSTER1", 3, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=noise1:,PORT=NOISE1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=3,TYPE=Float32,FTVL=FLOAT,NELEMENTS=160000")
NDStdArraysConfigure("MASK1", 3, 0, "CLUSTER1", 4, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=mask1:,PORT=MASK1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=4,TYPE=Int8,FTVL=UCHAR,NELEMENTS=160000")
# The corrections' maps: each pixel's common-mode region's rms (address 6)
# and the gain map applied (address 7).
NDStdArraysConfigure("COMMONMODE1", 3, 0, "CLUSTER1", 6, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=commonMode1:,PORT=COMMONMODE1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=6,TYPE=Float32,FTVL=FLOAT,NELEMENTS=160000")
NDStdArraysConfigure("GAIN1", 3, 0, "CLUSTER1", 7, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=gain1:,PORT=GAIN1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=7,TYPE=Float32,FTVL=FLOAT,NELEMENTS=160000")
# The analog image while DetectorMode is Analog (address 8).
NDStdArraysConfigure("ANALOG1", 3, 0, "CLUSTER1", 8, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=analog1:,PORT=ANALOG1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=8,TYPE=Float64,FTVL=DOUBLE,NELEMENTS=160000")

# PV Access, when the IOC is built with it (envPaths then sets PVA, which
# turns these lines on; without, "#" makes them comments): every array of
# the finder as an NTNDArray, $(PREFIX)Pva:NAME (iocBoot/clusterPva.iocsh),
# and every record over PVA as well as Channel Access (QSRV).
$(PVA=#)iocshLoad("$(CLUSTER_TOP)/iocBoot/clusterPva.iocsh", "PREFIX=$(PREFIX),FINDER=CLUSTER1")
$(PVA=#)startPVAServer

# Access security (iocBoot/operators.acf): the operators write from the
# operator hosts, everyone else reads.
asSetSubstitutions("OPERATORS='$(CLUSTER_OPERATORS=$(USER=root))',OPERATOR_HOSTS='$(CLUSTER_OPERATOR_HOSTS=localhost)'")
asSetFilename("$(CLUSTER_TOP)/iocBoot/operators.acf")

# Autosave, when the IOC is built with it (envPaths then sets AUTOSAVE,
# which turns these lines on; without, "#" makes them comments): the
# settings of iocClusterCUDA.req, restored before the records initialise,
# saved every AUTOSAVE_PERIOD seconds (default 30; autosave's least is 4)
# into AUTOSAVE_FILES (default build/ioc). With the finder's
# LoadFilesAtStart Yes, the pedestal and mask named by the restored
# PedestalFile and MaskFile are loaded at the first frame; EtaMode
# Interpolate loads the restored EtaFile.
$(AUTOSAVE=#)set_requestfile_path("$(CLUSTER_TOP)/iocBoot/iocClusterCUDA")
$(AUTOSAVE=#)set_requestfile_path("$(CLUSTER_TOP)/db")
$(AUTOSAVE=#)set_requestfile_path("$(ADCORE)/db")
$(AUTOSAVE=#)set_savefile_path("$(AUTOSAVE_FILES=$(CLUSTER_BUILD)/ioc)")
$(AUTOSAVE=#)set_pass0_restoreFile("iocClusterCUDA.sav")
$(AUTOSAVE=#)set_pass1_restoreFile("iocClusterCUDA.sav")
$(AUTOSAVE=#)save_restoreSet_DatedBackupFiles(0)

iocInit()

$(AUTOSAVE=#)create_monitor_set("iocClusterCUDA.req", $(AUTOSAVE_PERIOD=30), "P=$(PREFIX)")
