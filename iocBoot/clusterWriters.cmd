# SPDX-License-Identifier: BSD-3-Clause
# clusterWriters.cmd: every frame's clusters to HDF5, read by both example
# IOCs' st.cmd after the finder (port CLUSTER1) is configured.
#
# HDF1 writes the cluster arrays of address 0 (Stream mode). One
# NDFileHDF5 keeps 6,000-7,000 arrays of 3000 rows (132 KB) a second on
# the H200's host; above that, NDPluginScatter (Scatter1) hands each array
# to one writer of HDF1 to HDF4 in turn, each with its file: for 20,000
# frames/s set HDF1:NDArrayPort to SCATTER1, enable Scatter1 and the four
# writers, and capture on all four (docs/ioc.md, "Every frame to HDF5").
# Each array's UniqueId is in its file (NDArrayUniqueId), which orders
# the frames again. Disabled writers cost nothing.
NDFileHDF5Configure("HDF1", 2000, 0, "CLUSTER1", 0)
dbLoadRecords("NDFileHDF5.template", "P=$(PREFIX),R=HDF1:,PORT=HDF1,ADDR=0,TIMEOUT=1,XMLSIZE=2048,NDARRAY_PORT=CLUSTER1")
NDScatterConfigure("SCATTER1", 2000, 0, "CLUSTER1", 0, 0, 0, 0, 0)
dbLoadRecords("NDScatter.template", "P=$(PREFIX),R=Scatter1:,PORT=SCATTER1,ADDR=0,TIMEOUT=1,NDARRAY_PORT=CLUSTER1")
NDFileHDF5Configure("HDF2", 2000, 0, "SCATTER1", 0)
dbLoadRecords("NDFileHDF5.template", "P=$(PREFIX),R=HDF2:,PORT=HDF2,ADDR=0,TIMEOUT=1,XMLSIZE=2048,NDARRAY_PORT=SCATTER1")
NDFileHDF5Configure("HDF3", 2000, 0, "SCATTER1", 0)
dbLoadRecords("NDFileHDF5.template", "P=$(PREFIX),R=HDF3:,PORT=HDF3,ADDR=0,TIMEOUT=1,XMLSIZE=2048,NDARRAY_PORT=SCATTER1")
NDFileHDF5Configure("HDF4", 2000, 0, "SCATTER1", 0)
dbLoadRecords("NDFileHDF5.template", "P=$(PREFIX),R=HDF4:,PORT=HDF4,ADDR=0,TIMEOUT=1,XMLSIZE=2048,NDARRAY_PORT=SCATTER1")
