{
  "targets": [
    {
      "target_name": "vector_scan",
      "sources": ["native/scan.c", "native/sparse.c"],
      "cflags": ["-O3", "-std=c11", "-ffp-contract=off"],
      "cflags!": ["-O2"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3", "-std=c11", "-ffp-contract=off"] },
      "msvs_settings": { "VCCLCompilerTool": { "Optimization": 2 } }
    }
  ]
}
