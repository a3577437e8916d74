# cmake -DFROM=file -DTO=dir -P CopyIfExists.cmake: copies FROM into TO when it exists (the
# peers' benchmark lives beside the project, in ../shared, which a clone may not have).
if(EXISTS "${FROM}")
  file(COPY "${FROM}" DESTINATION "${TO}")
endif()
