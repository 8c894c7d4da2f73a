// zlib, as the system provides it (Debian: zlib1g-dev; Apple platforms: the SDK).
#include <zlib.h>
