//! The x86 PE guest: PE loader, decoder, lifter, state and the win32-console platform.
