#include "pevp/numerics/formats.h"
