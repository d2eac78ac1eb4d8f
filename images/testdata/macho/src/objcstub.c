// objcstub.c: the one libobjc symbol a root class refers to.
void *_objc_empty_cache;
