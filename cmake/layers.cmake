# The layers of krc, enforced by the build.
#
# Each folder of src/ (with its headers in include/krc/<folder>/) is a layer and becomes one
# static library, krc_<layer> (a sub-folder such as alert/dest: krc_alert_dest). A layer is
# compiled with an include tree of its own, generated under BUILD/layers/<layer>/, that holds
# the headers of its own layer and of the layers it may use, and nothing else: an
# `#include "krc/alert/sender.h"` in src/store/ is "No such file or directory". A call into a
# layer it may not use fails too: it has no declaration (-Werror=implicit-function-declaration
# is always on for the layer libraries). The tests, the benchmarks, the fuzz targets and the
# test tools see every header (krc_core).
#
# The table: one line per layer, lowest first. USES names the layers a layer may use directly;
# what those may use comes along (a header of the layer used may include theirs). A layer may
# only use layers listed above it, so the graph has no cycles. LIBS: the outside libraries the
# layer's own code calls. A sub-folder that is not listed belongs to its parent's layer; one
# that is listed (krc_layer(alert/dest ...)) is a layer of its own. A source or header folder
# that is in no layer stops the configuration. tests/tools/layer_check.py (ctest layers, label
# unit) compiles a file in each layer that includes a header of each other layer and expects
# exactly the ones this table allows to build.
#
#         layer     may use                              outside libraries
krc_layer(util                                           LIBS PkgConfig::CURL PkgConfig::YAML
                                                              Threads::Threads m)
krc_layer(model     USES util)
krc_layer(config    USES util                            LIBS PkgConfig::YAML)
krc_layer(kube      USES model                           LIBS PkgConfig::CJSON PkgConfig::YAML)
krc_layer(detect    USES kube)
krc_layer(track     USES kube)
krc_layer(collect   USES detect track)
krc_layer(diagnose  USES model)
krc_layer(store     USES model                           LIBS PkgConfig::SQLITE PkgConfig::LIBPQ
                                                              PkgConfig::CJSON)
krc_layer(analyse   USES collect diagnose)
krc_layer(alert     USES config detect diagnose store    LIBS PkgConfig::CJSON
                                                              PkgConfig::OPENSSL)
krc_layer(serve     USES model                           LIBS PkgConfig::MHD PkgConfig::CJSON)
krc_layer(mcp       USES config analyse store serve         LIBS PkgConfig::CJSON)
krc_layer(daemon    USES alert collect serve analyse mcp)
krc_layer(demo      USES daemon                          LIBS PkgConfig::MHD PkgConfig::CJSON)
krc_layer(explain   USES util                            LIBS PkgConfig::CJSON PkgConfig::YAML)
krc_layer(cli       USES demo explain                    LIBS PkgConfig::CJSON)

# ---- Known violations: uses the table above does not allow, kept building until the code
# ---- moves. Shrink this list; never add to it (move the code to the layer it belongs to).
# ---- End of the known violations.
