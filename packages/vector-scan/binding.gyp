{
  "targets": [
    {
      "target_name": "vector_scan",
      "sources": ["native/scan.c"],
      "cflags": ["-O3", "-std=c11"],
      "cflags!": ["-O2"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3", "-std=c11"] },
      "msvs_settings": { "VCCLCompilerTool": { "Optimization": 2 } }
    }
  ]
}
