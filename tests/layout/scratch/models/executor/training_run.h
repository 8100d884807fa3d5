#pragma once
// Scratch header for the layout.arrows self-test (tests/layout/CMakeLists.txt).
