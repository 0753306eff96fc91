/* A shared library that is not an emqd plugin: no emq_plugin_abi_version. */
int not_a_plugin(void);
__attribute__((visibility("default"))) int not_a_plugin(void) { return 1; }
