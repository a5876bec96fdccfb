# SPDX-License-Identifier: BSD-3-Clause
# st.cmd: the example IOC on PSI's slsDetector areaDetector driver. The
# driver reads the MÖNCH module named in SLS_CONFIG (moench.config beside
# this file: PSI's virtual server on this machine) through its receiver's
# ZMQ stream and feeds NDPluginClusterCUDA; NDFileHDF5 writes the clusters
# of every frame; NDPluginStats watches the frames; NDStdArrays serves the
# hit map and the interpolated image; autosave keeps the settings. Start it with
# build/ioc/run-iocMoench (it runs in build/ioc, where envPaths says where
# everything is). PREFIX (default MOENCH:) names the PVs.

< envPaths
epicsEnvSet("PREFIX", "$(PREFIX=MOENCH:)")
epicsEnvSet("SLS_CONFIG", "$(SLS_CONFIG=$(CLUSTER_TOP)/iocBoot/iocMoench/moench.config)")
epicsEnvSet("EPICS_DB_INCLUDE_PATH", "$(ADCORE)/db:$(CLUSTER_TOP)/db:$(SLS_DRIVER)/db")
# Frames are 400 x 400 uint16 (320 KB); the interpolated image is up to
# 2000 x 2000 uint32 (16 MB) for viewers.
epicsEnvSet("EPICS_CA_MAX_ARRAY_BYTES", "20000000")

dbLoadDatabase("$(CLUSTER_BUILD)/ioc/iocMoench.dbd")
iocMoench_registerRecordDeviceDriver(pdbbase)

# Page-locked NDArray buffers for the CUDA backend, before any pool
# allocates one (ordinary memory, at no cost, without a GPU).
NDClusterCUDAPinnedArrays($(PINNED_ARRAYS=1))

# PSI's driver: port, configuration file, detector index (its shared
# memory's name), modules, maxBuffers, maxMemory (0: no limit).
slsDetectorConfig("SD1", "$(SLS_CONFIG)", $(SLS_DETECTOR_ID=0), 1, 0, 0)
dbLoadRecords("slsDetector.template", "P=$(PREFIX),R=cam1:,PORT=SD1,ADDR=0,TIMEOUT=1")
# The driver refuses writes while it acquires: its pool statistics are
# polled between acquisitions only.
dbLoadRecords("slsDetectorIdlePoll.template", "P=$(PREFIX),R=cam1:")

# The cluster finder on the driver's frames; CLUSTER_OUTPUT_THREADS output
# threads (docs/ioc.md says what they buy).
NDClusterCUDAConfigure("CLUSTER1", 2000, 0, "SD1", 0, 0, 0, 0, 0, $(CLUSTER_OUTPUT_THREADS=6))
dbLoadRecords("NDClusterCUDA.template", "P=$(PREFIX),R=Cluster1:,PORT=CLUSTER1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=SD1")
# Its FrameMode follows the driver's JsonFrameMode (PSI's screen drives
# it) while FollowDriverModes is Yes.
dbLoadRecords("NDClusterCUDAFollow.template", "P=$(PREFIX),R=Cluster1:,DRIVER=$(PREFIX)cam1:")

# The clusters of every frame to HDF5 (Stream mode), from address 0.
NDFileHDF5Configure("HDF1", 2000, 0, "CLUSTER1", 0)
dbLoadRecords("NDFileHDF5.template", "P=$(PREFIX),R=HDF1:,PORT=HDF1,ADDR=0,TIMEOUT=1,XMLSIZE=2048,NDARRAY_PORT=CLUSTER1")

# Statistics of the frames.
NDStatsConfigure("STATS1", 100, 0, "SD1", 0, 0, 0, 0, 0, 1)
dbLoadRecords("NDStats.template", "P=$(PREFIX),R=Stats1:,PORT=STATS1,ADDR=0,TIMEOUT=1,HIST_SIZE=256,XSIZE=400,YSIZE=400,NCHANS=256,NDARRAY_PORT=SD1")
NDTimeSeriesConfigure("STATS1_TS", 100, 0, "STATS1", 1, 23)
dbLoadRecords("NDTimeSeries.template", "P=$(PREFIX),R=Stats1:TS:,PORT=STATS1_TS,ADDR=0,TIMEOUT=1,NDARRAY_PORT=STATS1,NDARRAY_ADDR=1,NCHANS=256,ENABLED=1")

# The hit map (address 1 of the finder) for viewers.
NDStdArraysConfigure("IMAGE1", 3, 0, "CLUSTER1", 1, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=image1:,PORT=IMAGE1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=1,TYPE=Int32,FTVL=LONG,NELEMENTS=160000")

# The interpolated image (address 5: EtaMode Interpolate), for viewers,
# up to Subpixels 5 on 400 x 400 frames.
NDStdArraysConfigure("INTERP1", 3, 0, "CLUSTER1", 5, 0, 0, 0, 0, 1)
dbLoadRecords("NDStdArrays.template", "P=$(PREFIX),R=interp1:,PORT=INTERP1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1,NDARRAY_ADDR=5,TYPE=Int32,FTVL=LONG,NELEMENTS=4000000")

# PV Access, when the IOC is built with it (envPaths then sets PVA, which
# turns these lines on; without, "#" makes them comments): every array of
# the finder as an NTNDArray, $(PREFIX)Pva:NAME (iocBoot/clusterPva.iocsh),
# and every record over PVA as well as Channel Access (QSRV).
$(PVA=#)iocshLoad("$(CLUSTER_TOP)/iocBoot/clusterPva.iocsh", "PREFIX=$(PREFIX),FINDER=CLUSTER1")
$(PVA=#)startPVAServer

# Autosave: the settings of iocMoench.req, restored before the records
# initialise (so the driver's PINI records write the saved values, not
# the template's: ReceiverMode 1, the NumFrames and periods in use), saved
# every 30 s into AUTOSAVE_FILES.
set_requestfile_path("$(CLUSTER_TOP)/iocBoot/iocMoench")
set_requestfile_path("$(CLUSTER_TOP)/db")
set_requestfile_path("$(ADCORE)/db")
set_requestfile_path("$(SLS_DRIVER)/slsDetectorApp/Db")
set_savefile_path("$(AUTOSAVE_FILES=$(CLUSTER_BUILD)/ioc/autosave)")
set_pass0_restoreFile("iocMoench.sav")
set_pass1_restoreFile("iocMoench.sav")
save_restoreSet_DatedBackupFiles(0)

# Access security (iocBoot/operators.acf): the operators write from the
# operator hosts, everyone else reads.
asSetSubstitutions("OPERATORS='$(CLUSTER_OPERATORS=$(USER=root))',OPERATOR_HOSTS='$(CLUSTER_OPERATOR_HOSTS=localhost)'")
asSetFilename("$(CLUSTER_TOP)/iocBoot/operators.acf")

iocInit()

create_monitor_set("iocMoench.req", 30, "P=$(PREFIX)")
