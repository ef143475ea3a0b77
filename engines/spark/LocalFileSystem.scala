// Hadoop's local file system, setting permissions with Java's own call instead of a process.
//
// Without Hadoop's native library, which PySpark does not ship, RawLocalFileSystem
// forks `chmod` for every file and directory it creates: two per micro-batch of a
// stateless query (its offset and commit files), more with state. From a Spark driver
// each fork took about 4 ms (engines/spark/local_file_system.py). Files.setPosixFilePermissions
// is chmod(2) itself. A mode it cannot express (sticky, setuid, setgid) or a file system
// without POSIX permissions goes Hadoop's own way.
package stagebench.hadoop

import java.nio.file.Files
import java.nio.file.attribute.PosixFilePermission
import java.nio.file.attribute.PosixFilePermission._
import java.util.EnumSet

import org.apache.hadoop.fs.{LocalFileSystem, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.FsPermission

class NioLocalFileSystem extends LocalFileSystem(new NioRawLocalFileSystem) {
  // As Hive's ProxyLocalFileSystem, the file: scheme's class that PySpark's jars choose
  // otherwise: no rename onto a file that exists.
  override def rename(src: Path, dst: Path): Boolean = !isFile(dst) && super.rename(src, dst)
}

class NioRawLocalFileSystem extends RawLocalFileSystem {
  override def setPermission(p: Path, permission: FsPermission): Unit = {
    val mode = permission.toShort.toInt
    if ((mode & ~0x1ff) != 0) super.setPermission(p, permission)
    else {
      val bits = EnumSet.noneOf(classOf[PosixFilePermission])
      NioRawLocalFileSystem.Bits.zipWithIndex.foreach { case (bit, i) =>
        if ((mode & (1 << i)) != 0) bits.add(bit)
      }
      try Files.setPosixFilePermissions(pathToFile(p).toPath, bits)
      catch { case _: UnsupportedOperationException => super.setPermission(p, permission) }
    }
  }
}

object NioRawLocalFileSystem {
  // bit i of the mode, from others' execute (0001) to the owner's read (0400)
  private val Bits = Array(OTHERS_EXECUTE, OTHERS_WRITE, OTHERS_READ, GROUP_EXECUTE,
    GROUP_WRITE, GROUP_READ, OWNER_EXECUTE, OWNER_WRITE, OWNER_READ)
}
